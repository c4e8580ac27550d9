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
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

from .errors import ConfigError
from .model import ResolvedConfig, Spec


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

    def spec_to_check(self) -> Spec:
        """The spec with the strengthening invariants (if asked) and the variant applied."""
        s = self.base_spec()
        if self.invariants:
            s = s.with_invariants_checked()
        return s.with_variant(self.variant)

    def config_name(self, spec: Spec | None = None) -> str | None:
        if self.config:
            return self.config
        s = spec or self.spec_to_check()
        if self.variant:
            return s.variant_named(self.variant).config
        return s.configs[0].name if s.configs else None

    def merged_overrides(self, spec: Spec | None = None) -> dict[str, str]:
        """The variant's own settings, then the user's overrides (which win)."""
        s = spec or self.spec_to_check()
        settings = {k: _text(v) for k, v in s.variant_named(self.variant).settings} if self.variant else {}
        return {**settings, **dict(self.overrides)}

    def resolve(self, spec: Spec | None = None) -> ResolvedConfig:
        s = spec or self.spec_to_check()
        return s.resolve_config(self.config_name(s), self.merged_overrides(s))

    def ground(self):
        """The GroundModel (the last few cached per process: a Spark worker grounds each request once)."""
        return _ground_cached(self) if isinstance(self.spec, str) else _ground(self)

    def to_json(self) -> dict:
        return {"spec": self.spec_name, "config": self.config, "overrides": [list(x) for x in self.overrides],
                "variant": self.variant, "invariants": self.invariants}


def _ground(request: ModelRequest):
    from .ground import ground
    s = request.spec_to_check()
    return ground(s, request.resolve(s))


_ground_cached = lru_cache(maxsize=4)(_ground)
