"""Everything sc-mlir asks of jax and jaxlib (the optional extra `sc-mlir[jax]`).

Two things: turn a kernel's MLIR bytecode (from a `tpu_custom_call`) back into MLIR text
with its debug locations, as `../shared/tools/pallas_to_mlir.py` does; and lower a
function for a TPU chip on any host, under an abstract device of that chip. Both use
jax internals (`jax._src...`), which change between releases: tested with
`TESTED_JAX_VERSIONS`, and on any other version a missing name is reported as such
(`JaxApiError`), never as a crash deep inside.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sc_mlir.read.embedded import INSTALL_LINE

TESTED_JAX_VERSIONS = ("0.10.2",)

# sc-mlir's chip names (as --chip takes them) -> jax's device_kind strings
# (jax/_src/pallas/mosaic/tpu_info.py, chip_version_from_device_kind).
DEVICE_KINDS = {"v4": "TPU v4", "v5e": "TPU v5 lite", "v5p": "TPU v5p", "v6e": "TPU v6 lite",
                "7x": "TPU7x", "8i": "TPU8i"}


class JaxMissing(RuntimeError):
    """jax or jaxlib is not installed."""


class JaxApiError(RuntimeError):
    """The installed jax lacks something sc-mlir uses (another version than tested)."""


class KernelUnreadable(ValueError):
    """jaxlib could not read one kernel's body (its problem, said in the message)."""


def available() -> bool:
    """Whether jax and jaxlib can be imported (without importing them)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in ("jax", "jaxlib"))
    except (ImportError, ValueError):  # a broken install, or a module without a spec
        return False


def jax_version() -> str:
    try:
        from importlib.metadata import version

        return version("jax")
    except Exception:  # not installed, or installed without metadata
        return "unknown"


def _api_error(what: str, exc: BaseException) -> JaxApiError:
    return JaxApiError(
        f"jax {jax_version()}: {what} failed ({type(exc).__name__}: {exc}). sc-mlir reads "
        f"Pallas kernels through jax internals tested with jax "
        f"{', '.join(TESTED_JAX_VERSIONS)}; install that version "
        f"(pip install 'jax=={TESTED_JAX_VERSIONS[-1]}' 'jaxlib=={TESTED_JAX_VERSIONS[-1]}')")


def _require() -> None:
    if not available():
        raise JaxMissing(f"reading Pallas kernels needs jax and jaxlib: {INSTALL_LINE}")


@dataclass(frozen=True)
class _Mlir:
    """The jaxlib MLIR pieces used here, looked up once."""

    ir: Any
    passmanager: Any
    context: Any


@cache
def _mlir() -> _Mlir:
    _require()
    try:
        from jax._src.interpreters import mlir as jax_mlir
        from jax._src.lib.mlir import ir, passmanager
        from jax.experimental.mosaic.dialects import tpu as tpu_dialect

        context = jax_mlir.make_ir_context()
        tpu_dialect.register_dialect(context)
        # The kernels may hold ops of dialects this jaxlib does not register (SparseCore's).
        context.allow_unregistered_dialects = True
    except (ImportError, AttributeError, TypeError) as exc:
        raise _api_error("setting up jaxlib's MLIR context with the tpu dialect", exc) from exc
    return _Mlir(ir, passmanager, context)


def kernel_text(body: bytes, serialized: bool) -> str:
    """The kernel's MLIR text, pretty form with debug locations, `mosaic-serde` undone.

    Raises KernelUnreadable when this body cannot be read (the rest may still be),
    JaxMissing or JaxApiError when none can.
    """
    mlir = _mlir()
    with mlir.context:
        try:
            location = mlir.ir.Location.unknown()
        except AttributeError as exc:
            raise _api_error("ir.Location.unknown", exc) from exc
        with location:
            try:
                module = mlir.ir.Module.parse(body)
            except AttributeError as exc:
                raise _api_error("ir.Module.parse", exc) from exc
            except Exception as exc:  # jaxlib raises MLIRError with the parser's notes
                raise KernelUnreadable(f"jaxlib {jax_version()} cannot parse the kernel's "
                                       f"body: {_first_line(exc)}") from exc
            if serialized:
                try:
                    pipeline = mlir.passmanager.PassManager.parse(
                        "builtin.module(mosaic-serde{serialize=false})")
                except AttributeError as exc:
                    raise _api_error("passmanager.PassManager.parse", exc) from exc
                except Exception as exc:
                    raise _api_error("the mosaic-serde pass", exc) from exc
                try:
                    pipeline.run(module.operation)
                except Exception as exc:
                    raise KernelUnreadable(f"mosaic-serde could not undo the serialization "
                                           f"(a kernel from a newer jax?): {_first_line(exc)}"
                                           ) from exc
            try:
                return str(module.operation.get_asm(enable_debug_info=True))
            except (AttributeError, TypeError) as exc:
                raise _api_error("Operation.get_asm(enable_debug_info=True)", exc) from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def device_kind(chip: str, aliases: Mapping[str, str]) -> str:
    """jax's device_kind for a chip name as `--chip` takes it; `aliases` is the chip-name
    table of `sc_mlir.model.bounds` (passed in: the reading layer sits below the model)."""
    key = chip.strip().lower()
    key = aliases.get(key, key)
    if key not in DEVICE_KINDS:
        raise ValueError(f"unknown chip {chip!r}; expected one of {', '.join(DEVICE_KINDS)}")
    return DEVICE_KINDS[key]


def lower(fn: Callable[..., Any], args: Sequence[Any], chip: str,
          aliases: Mapping[str, str]) -> Any:
    """`jax.jit(fn).trace(*args).lower(lowering_platforms=("tpu",))` under an abstract
    device of `chip`: no TPU needed (the abstract device is what Pallas's `get_tpu_info`
    and the SparseCore meshes read). Returns the `jax.stages.Lowered`."""
    kind = device_kind(chip, aliases)
    _require()
    try:
        import jax
        from jax.sharding import AbstractDevice, AbstractMesh, AxisType

        device = AbstractDevice(device_kind=kind, num_cores=1, platform="tpu")
        mesh = AbstractMesh((1,), ("_host",), axis_types=(AxisType.Explicit,),
                            abstract_device=device)
        use_mesh = jax.sharding.use_abstract_mesh
    except (ImportError, AttributeError, TypeError) as exc:
        raise _api_error("building an abstract TPU device (jax.sharding.AbstractDevice, "
                         "AbstractMesh, use_abstract_mesh)", exc) from exc
    with use_mesh(mesh):
        traced = jax.jit(fn).trace(*args)
        return traced.lower(lowering_platforms=("tpu",))


def lowered_text(lowered: Any) -> str:
    """The StableHLO text of a `jax.stages.Lowered`."""
    try:
        return str(lowered.as_text())
    except AttributeError as exc:
        raise _api_error("Lowered.as_text()", exc) from exc
