"""Specs the tests load: small models beside the shipped ones (a regular package, so that no module named
`models` elsewhere on the path, such as the script python-sat installs into the venv's bin, can shadow it)."""
