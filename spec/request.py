"""The model request: which spec, config, overrides and variant to check, as one frozen value.

Every command (`check`, `tables`, `bmc`, `replay`), every engine and every Spark worker receives a
`ModelRequest` and grounds it the same way, through `ground()` here: the variant is applied, the
variant's own settings are merged under the user's `--set` overrides, the named config (or the
variant's, or the spec's first) is resolved, and the result is grounded. Nothing else resolves a
variant or a config.

A request names its spec by catalogue name (`kafka`) or as `module:ATTR`, so it can travel to a
Spark executor as plain data; tests may also hold a `Spec` object directly.
"""
from __future__ import annotations

import importlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Mapping

from .errors import ConfigError
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
        return ModelRequest(spec, config, pairs, variant or None, invariants)

    # -- resolution (the one recipe) -----------------------------------------------------------------
    @property
    def spec_name(self) -> str:
        return self.spec if isinstance(self.spec, str) else self.spec.name

    def base_spec(self) -> Spec:
        """The spec as shipped (no variant, no invariants folded in)."""
        if not isinstance(self.spec, str):
            return self.spec
        if ":" in self.spec:
            module, _, attr = self.spec.partition(":")
            try:
                found = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError) as err:
                raise ConfigError(f"cannot load spec {self.spec} ({err}); give MODULE:ATTRIBUTE of a Spec") from None
            if not isinstance(found, Spec):
                raise ConfigError(f"{self.spec} is a {type(found).__name__}, not a Spec")
            return found
        from . import catalog
        return catalog.load(self.spec)

    def ground(self):
        """The GroundModel, grounded by the one recipe. The last few are cached per process (a Spark
        worker grounds each request once, replay grounds a model once for many traces), keyed by the
        request and the very spec object it resolves to, so a spec swapped in (a test's catalog) is
        grounded afresh."""
        base = self.base_spec()
        key = (self.spec_name, self.config, self.overrides, self.variant, self.invariants, id(base))
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
        model = ground(spec, spec.resolve_config(config, {**settings, **dict(self.overrides)}))  # --set wins
        _GROUNDED[key] = (base, model)
        while len(_GROUNDED) > 8:
            _GROUNDED.popitem(last=False)
        return model


_GROUNDED: OrderedDict = OrderedDict()  # a per-process cache of frozen requests, not configuration
