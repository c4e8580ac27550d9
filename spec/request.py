"""The model request: which spec, config, overrides and variant to check, as one frozen value.

Every command (`check`, `tables`, `bmc`, `replay`), every engine and every Spark worker receives a
`ModelRequest` and grounds it the same way, through `ground()` here: the variant is applied, the
variant's own settings are merged under the user's `--set` overrides, the named config (or the
variant's, or the spec's first) is resolved, and the result is grounded. Nothing else resolves a
variant or a config.

A request names its spec as `spec/loader.py` reads a SPEC argument: a catalogue name (`kafka`), a
spec file (held as its absolute path, so it means the same file from any working directory),
`module:ATTR`, or a name an installed package publishes; so it can travel to a Spark executor as plain
data. Tests may also hold a `Spec` object directly. The ground model of a named spec carries how it
was loaded (`GroundModel.source`), which the traces built from it record.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Mapping

from .model import Spec


def _text(value: object) -> str:
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class ModelRequest:
    spec: "str | Spec"
    config: str | None = None                      # None: the variant's config, else the spec's first
    overrides: tuple[tuple[str, str], ...] = ()    # --set KEY=VALUE, as text, sorted by key
    variant: str | None = None
    invariants: bool = False                       # also check the strengthening invariants as properties

    @staticmethod
    def of(spec: "str | Spec", config: str | None = None, overrides: Mapping[str, object] | None = None,
           variant: str | None = None, invariants: bool = False) -> "ModelRequest":
        pairs = tuple(sorted((str(k), _text(v)) for k, v in dict(overrides or {}).items()))
        if isinstance(spec, str):
            from . import loader
            spec = loader.canonical(spec)  # a spec file by its absolute path
        return ModelRequest(spec, config, pairs, variant or None, invariants)

    # -- resolution (the one recipe) -----------------------------------------------------------------
    @property
    def spec_name(self) -> str:
        """The spec's name as a user reads it: a catalogue name or MODULE:ATTR as given, a spec file's
        declared `name` (its path is in `source().ref`)."""
        if not isinstance(self.spec, str):
            return self.spec.name
        from . import loader
        return self.base_spec().name if loader.is_file_ref(self.spec) else self.spec

    def loaded(self):
        """The spec and how it was loaded (`spec.loader.Loaded`); None for a request holding a Spec object."""
        if not isinstance(self.spec, str):
            return None
        from . import loader
        return loader.resolve(self.spec)

    def source(self):
        """How the spec was loaded (`spec.loader.SpecSource`), or None for a Spec object."""
        got = self.loaded()
        return got.source if got is not None else None

    def base_spec(self) -> Spec:
        """The spec as shipped (no variant, no invariants folded in)."""
        got = self.loaded()
        return self.spec if got is None else got.spec

    def ground(self):
        """The GroundModel, grounded by the one recipe. The last few are cached per process (a Spark
        worker grounds each request once, replay grounds a model once for many traces), keyed by the
        request, where its spec was loaded from (two spec files may declare the same name) and the
        very spec object it resolves to, so a spec swapped in (a test's catalog) or a spec file edited
        since is grounded afresh."""
        got = self.loaded()
        base = self.spec if got is None else got.spec
        source = None if got is None else got.source
        ref = self.spec if isinstance(self.spec, str) else base.name
        key = (ref, self.config, self.overrides, self.variant, self.invariants, id(base), source)
        hit = _GROUNDED.get(key)
        if hit is not None and hit[0] is base:
            _GROUNDED.move_to_end(key)
            return hit[1]
        from .ground import ground
        spec = base.with_invariants_checked() if self.invariants else base
        spec = spec.with_variant(self.variant)
        if self.variant:
            variant = spec.variant_named(self.variant)
            config = self.config or variant.config
            settings = {k: _text(v) for k, v in variant.settings}
        else:
            config = self.config or (spec.configs[0].name if spec.configs else None)
            settings = {}
        resolved = spec.resolve_config(config, {**settings, **dict(self.overrides)})  # --set wins
        # the same model asked for in other words (a trace replayed names every value, a check only the config)
        same = (ref, resolved, self.variant, self.invariants, id(base))
        hit = _GROUNDED.get(same)
        if hit is not None and hit[0] is base:
            model = hit[1] if hit[1].source == source else replace(hit[1], source=source)
        else:
            model = ground(spec, resolved)
            if source is not None:
                model = replace(model, source=source)
            _GROUNDED[same] = (base, model)
        _GROUNDED[key] = (base, model)
        while len(_GROUNDED) > 16:
            _GROUNDED.popitem(last=False)
        return model


_GROUNDED: OrderedDict = OrderedDict()  # a per-process cache of frozen requests, not configuration
