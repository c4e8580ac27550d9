"""Picklable references and options for the Spark engine (no pyspark import here).

Executors never receive pickled models or closures over them: they receive a `ModelRef` (the model
request, resolved on the driver, and whether symmetry is on) and rebuild the ground model and its
kernel once per Python worker process, cached by the reference.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from txncheck.spec.errors import ConfigError
from txncheck.spec.request import ModelRequest


@dataclass(frozen=True)
class ModelRef:
    """Everything an executor needs to rebuild the GroundModel: no code, only names and values.

    `request` is the driver's model request with its config resolved there (a named config, overrides as
    text), so executors ground exactly what the driver grounded, by the same recipe
    (`ModelRequest.ground`). Its spec is a catalogue name (`twophase`, `kafka`, ...), `module:ATTR`
    naming a Spec object in a module the executors can import, a name an installed package publishes,
    or a spec file's absolute path. A spec file travels with the reference: `files` holds its bytes (and
    those of the modules beside it that it imports), and each executor loads the spec from them
    (`spec.loader.provide`), so no filesystem need be shared."""

    request: ModelRequest
    symmetry: bool = False
    spec_sha256: str | None = None  # a spec file's hash: part of the reference (a resumed run must match)
    files: tuple[tuple[str, bytes], ...] = field(default=(), compare=False, repr=False)

    @staticmethod
    def of(request: ModelRequest, model, symmetry: bool = False) -> "ModelRef":
        """The reference for a request the driver has grounded (`model`): its config as resolved there, so
        executors need not resolve it again."""
        if not isinstance(request.spec, str):
            raise ConfigError(f"the Spark engine ships specs to executors by reference; spec {request.spec_name} "
                              "is an object: give its catalogue name, a spec file's path or MODULE:ATTRIBUTE")
        resolved = ModelRequest.of(request.spec, model.config.name, dict(model.config.overrides), request.variant,
                                    request.invariants)  # the overrides as text, as every request holds them
        loaded = resolved.loaded()
        shipped = loaded.texts if loaded is not None and loaded.source.kind == "file" else ()
        return ModelRef(resolved, symmetry, loaded.source.sha256 if shipped else None, shipped)

    @staticmethod
    def named(spec: str, config: str | None = None, overrides=(), variant: str | None = None,
              symmetry: bool = False, invariants: bool = False) -> "ModelRef":
        """A reference by names alone (no spec file shipped): `python -m txncheck.checker.spark` and tests."""
        return ModelRef(ModelRequest.of(spec, config, dict(overrides), variant, invariants), symmetry)

    def build(self):
        """The GroundModel, grounded as every command grounds it (cached per process); a spec file from
        the bytes the reference carries."""
        if self.files:
            from txncheck.spec import loader
            loader.provide(self.request.spec, self.files)
        return self.request.ground()

    def kernel(self, model=None):
        """The vector kernel for this model (cached per process); `model`: its ground model, if at hand."""
        got = _KERNELS.get(self)
        if got is None:
            got = make_kernel(model if model is not None else self.build(), self.symmetry)
            _KERNELS[self] = got
        return got

    def to_json(self) -> dict:
        r = self.request
        out = {"spec": r.spec, "config": r.config, "overrides": [list(x) for x in r.overrides],
               "variant": r.variant, "symmetry": self.symmetry}
        if r.invariants:  # absent when off, so stores written before the field existed still resume
            out["invariants"] = True
        if self.spec_sha256:  # a spec file's hash: a store resumes only the file it was written for
            out["spec_sha256"] = self.spec_sha256
        return out

    @classmethod
    def from_json(cls, d: dict) -> "ModelRef":
        request = ModelRequest(d["spec"], d.get("config"), tuple((str(k), str(v)) for k, v in d.get("overrides", ())),
                               d.get("variant"), bool(d.get("invariants", False)))
        return cls(request, bool(d.get("symmetry", False)), d.get("spec_sha256"))


_KERNELS: dict = {}


def make_kernel(model, symmetry: bool):
    from txncheck.checker.vector.kernel import VectorKernel
    return VectorKernel(model, symmetry)


@dataclass(frozen=True)
class SparkOptions:
    """How to run on Spark.

    master: any URL spark-submit accepts (`local[2]`, `spark://host:7077`, `yarn`, `k8s://...`).
    partitions: number of fingerprint partitions of the visited set (fixed for a run; a resumed run
        keeps the stored value). None: 2 x the cluster's default parallelism, at least 4.
    tasks: Spark tasks per level, each owning partitions p = t, t + tasks, ... None: the cluster's
        default parallelism (one task per core: each task costs tens of ms of Python start-up).
    store: where levels are written (Parquet); must be visible at the same path to the driver and
        every executor on a multi-machine cluster (shared filesystem, or an hdfs:// / s3:// URI).
        None: a temporary directory, removed at the end.
    resume: a store written by an earlier (killed) run of the same model: continue from its last
        complete level.
    """

    master: str = "local[*]"
    partitions: int | None = None
    tasks: int | None = None
    store: str | None = None
    resume: str | None = None
    driver_memory: str | None = None     # e.g. "1g" (spark.driver.memory)
    executor_memory: str | None = None   # e.g. "1g" (spark.executor.memory)
    executor_cores: int | None = None
    batch_rows: int = 65536              # Arrow batch size exchanged with the kernel
    conf: tuple[tuple[str, str], ...] = ()  # extra Spark settings
    ship_package: bool = True            # zip txncheck and addPyFile it to executors
    keep_store: bool | None = None       # None: keep when `store` was given
    quiet: bool = True
    reuse_session: bool = True           # use an already active SparkSession (and leave it running)
    app_name: str = "txncheck"
    extra: dict = field(default_factory=dict, compare=False, hash=False)
