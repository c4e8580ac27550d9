"""The scalar reference engine (generated Python over state tuples)."""
