"""gputraffic from Python: simulate GPU memory traffic, evaluate the literature's models, rank
block shapes and sweep configurations, with the same inputs, results and error messages as the
``gputraffic`` command line.

>>> import gputraffic
>>> r = gputraffic.simulate("star1", hw="h200", block=(32, 4, 2), domain=(128, 128, 64))
>>> r["metrics"]["dram__sectors_read.sum"]

A kernel is a shipped name, a path (a trace, or a ``.ptx`` / ``.cu`` file, lifted with the
default settings), or a :class:`Kernel`: parsed from trace text, or lifted from CUDA source or
PTX text with options, as ``gputraffic simulate --kernel FILE.cu --entry NAME`` lifts a file:

>>> k = gputraffic.Kernel.from_cuda(open("my_stencil.cu").read(), entry="my_kernel")
>>> gputraffic.rank(k, "all-256", domain=(512, 512, 512))["shapes"][0]["block"]

Every function returns what the command line prints with ``--format json``, parsed: ``simulate``
the object of ``gputraffic simulate --format json``, ``predict`` that of ``gputraffic predict``,
``rank`` the object of ``gputraffic rank``, ``sweep`` the rows of a ``.jsonl`` sweep. Bad input
raises ``ValueError`` carrying the command line's one-line message. The simulation runs with the
GIL released, so other Python threads go on meanwhile.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._native import Kernel

__all__ = [
    "Kernel",
    "simulate",
    "predict",
    "rank",
    "sweep",
    "list_kernels",
    "list_hw",
    "list_models",
    "show",
    "__version__",
]

try:
    from importlib.metadata import version as _version

    __version__ = _version("gputraffic")
except Exception:  # pragma: no cover - running from a source tree without metadata
    __version__ = "unknown"

KernelArg = Union[str, "os.PathLike[str]", Kernel]
Dims = Union[str, int, Sequence[int]]
Value = Union[int, float, str]


def _kernel(kernel: KernelArg) -> Union[str, Kernel]:
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, (str, os.PathLike)):
        return os.fspath(kernel)
    raise TypeError(
        "kernel must be a shipped kernel name, a path, or a gputraffic.Kernel, "
        f"not {type(kernel).__name__}"
    )


def _dims(value: Optional[Dims], what: str) -> Optional[str]:
    """A shape or domain as the command line writes it: 32x8x4."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise TypeError(f"{what} must be a string, an int or a sequence of ints")
    if isinstance(value, int):
        return str(value)
    try:
        parts = [int(v) for v in value]
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a string, an int or a sequence of ints") from None
    return "x".join(str(p) for p in parts)


def _settings(params: Optional[Mapping[str, Value]]) -> List[str]:
    """{name: value} as the command line's NAME=VALUE settings."""
    if params is None:
        return []
    return [f"{name}={value}" for name, value in params.items()]


def _warn(messages: Sequence[str]) -> None:
    for m in messages:
        warnings.warn(m, stacklevel=3)


def simulate(
    kernel: KernelArg,
    hw: str = "h200",
    block: Optional[Dims] = None,
    domain: Optional[Dims] = None,
    params: Optional[Mapping[str, Value]] = None,
    *,
    compare: Optional[str] = None,
    clock: Union[str, float] = "base",
    threads: Optional[int] = None,
    infinite_l1: bool = False,
    infinite_l2: bool = False,
    compulsory: bool = True,
    sample: bool = False,
    by_array: bool = False,
) -> Dict[str, Any]:
    """Simulates one launch: ``gputraffic simulate --format json``, parsed.

    kernel: a shipped name (``"star4"``), a path (a trace, ``.ptx`` or ``.cu``), or a
    :class:`Kernel` made from text (``Kernel(toml)``, ``Kernel.from_cuda``, ``Kernel.from_ptx``).
    hw: a shipped GPU (``"h200"``) or a path to a configuration.
    block: ``"32x8x4"`` or ``(32, 8, 4)``; the kernel's default when None.
    domain: ``"512x512x256"``, ``(512, 512, 256)``, or fewer sizes for 1-D / 2-D kernels.
    params: kernel parameters and, with ``compare``, model constants: ``{"r": 2}``.
    compare: also evaluate this model (see :func:`list_models`) beside the simulation.
    clock: ``"base"`` (the default: the clock Nsight Compute locks, or the config's one clock where
    it gives no base clock), ``"boost"`` or GHz for the time model.
    threads: worker threads (default all cores); results never depend on it.
    sample: simulate a stratified sample of a long launch's waves and extrapolate; the result
    then has ``metrics_ci95`` (a 95% interval per metric) and ``simulation["sampled"]``.
    by_array: also count the traffic of every array and of each access in the L1 (the result
    then has ``by_array``, as ``--by-array`` gives it; not with ``sample``).
    """
    text, notes = _native.simulate(
        _kernel(kernel),
        hw,
        _dims(block, "block"),
        _dims(domain, "domain"),
        _settings(params),
        str(clock),
        compare,
        threads,
        infinite_l1,
        infinite_l2,
        compulsory,
        sample,
        by_array,
    )
    _warn(notes)
    return json.loads(text)


def predict(
    kernel: KernelArg,
    model: str,
    hw: str = "h200",
    block: Optional[Dims] = None,
    domain: Optional[Dims] = None,
    params: Optional[Mapping[str, Value]] = None,
    *,
    clock: Union[str, float] = "base",
) -> Dict[str, Any]:
    """Evaluates a closed-form model on one launch: ``gputraffic predict --format json``, parsed.

    A kernel outside the model's scope raises ``ValueError``; control flow the model was not
    written for gives a ``UserWarning`` beside the numbers.
    """
    text, notes = _native.predict(
        _kernel(kernel),
        model,
        hw,
        _dims(block, "block"),
        _dims(domain, "domain"),
        _settings(params),
        str(clock),
    )
    _warn(notes)
    return json.loads(text)


def rank(
    kernel: KernelArg,
    blocks: Union[str, Sequence[Dims]],
    hw: str = "h200",
    domain: Optional[Dims] = None,
    params: Optional[Mapping[str, Value]] = None,
    *,
    clock: Union[str, float] = "base",
    threads: Optional[int] = None,
    sample: bool = False,
    exact: bool = False,
) -> Dict[str, Any]:
    """Ranks block shapes fastest first: ``gputraffic rank --format json``, parsed: the kernel,
    GPU, domain and clock (``clock_ghz``, ``clock``), and ``shapes``, each with its ``rank``, its
    predicted time and the terms it is the sum of, and ``tie`` when within ``tie_margin`` of the
    first.

    blocks: shapes (``"32x8x4"`` or tuples) and named sets (``"all-1024"``, ``"ernst-512"``,
    ``"tabik-2d"``); a single string may list several, comma-separated. Shapes of named sets
    that cannot launch are left out with a ``UserWarning``. By default every shape is screened
    (a sampled simulation of a few waves) unless a lower bound of its time, or its pre-screen
    (four waves with an L2 that never evicts, a lower estimate), is already above the leader's,
    and those that may be the fastest are simulated exactly; they come first,
    ``"simulated": "exact"``, the others after with ``"simulated": "screened"`` and their
    estimate's interval (``predicted_lo_s``, ``predicted_hi_s``), then those never screened,
    ``"simulated": "bounded"`` or ``"prescreened"``, at their bound or pre-screen
    (``predicted_hi_s`` ``None``). ``exact=True`` simulates every shape exactly; ``sample=True`` every
    shape sampled (see :func:`simulate`), confirming none.
    """
    text, skipped = _native.rank(
        _kernel(kernel),
        _block_list(blocks),
        hw,
        _dims(domain, "domain"),
        _settings(params),
        str(clock),
        threads,
        sample,
        exact,
    )
    _warn([f"skipped {s}" for s in skipped])
    return json.loads(text)


def sweep(
    kernel: KernelArg,
    blocks: Union[str, Sequence[Dims]],
    hw: Union[str, Sequence[str]] = "h200",
    domains: Union[None, Dims, Sequence[Dims]] = None,
    params: Optional[Mapping[str, Union[Value, Sequence[Value]]]] = None,
    *,
    l1_scale: Sequence[float] = (),
    l2_scale: Sequence[float] = (),
    models: Union[str, Sequence[str]] = "all",
    clock: Union[str, float] = "base",
    threads: Optional[int] = None,
    sample: bool = False,
    as_dataframe: bool = False,
) -> Any:
    """Simulates every combination, like ``gputraffic sweep`` into a ``.jsonl`` file.

    Returns the rows in configuration order as a list of dicts (the objects of the ``.jsonl``
    lines), or a pandas DataFrame with ``as_dataframe=True``.

    blocks: shapes and named sets, as for :func:`rank`.
    hw: one GPU or a list.
    domains: a list of domains (``[(256, 256, 64), "512x512x64", "square-xy:total=2^24:from=64:to=4096"]``),
    or one domain (a string, an int, or a tuple of ints); the kernel's own when None.
    params: each kernel parameter or model constant with one value or a list of values; every
    combination runs.
    l1_scale, l2_scale: factors for the cache capacities.
    models: model names whose predictions go into every row, ``"all"`` or ``"none"``.
    sample: sample the interior waves of long launches (as :func:`simulate`); every row then has
    ``sampled`` and ``<metric>_ci95_lo`` / ``<metric>_ci95_hi``, its metric's 95% interval.
    """
    if isinstance(hw, str):
        hw = [hw]
    if domains is None:
        domain_list: List[str] = []
    elif isinstance(domains, (str, int)) or (
        isinstance(domains, tuple) and all(isinstance(d, int) for d in domains)
    ):
        domain_list = [_dims(domains, "domains")]  # type: ignore[list-item]
    else:
        domain_list = [_dims(d, "domains") for d in domains]  # type: ignore[misc]
    sets = []
    for name, values in (params or {}).items():
        if isinstance(values, (str, int, float)):
            values = [values]
        sets.append(f"{name}=" + ",".join(str(v) for v in values))
    if isinstance(models, str):
        models = [models]
    text, skipped = _native.sweep(
        _kernel(kernel),
        _block_list(blocks),
        list(hw),
        domain_list,
        sets,
        [float(s) for s in l1_scale],
        [float(s) for s in l2_scale],
        list(models),
        str(clock),
        threads,
        bool(sample),
    )
    if skipped:
        _warn(
            [
                f"{len(skipped)} shape(s) of the named block sets cannot launch and are left "
                "out: " + "; ".join(skipped)
            ]
        )
    rows = json.loads(text)
    if not as_dataframe:
        return rows
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "sweep(..., as_dataframe=True) needs pandas: pip install pandas"
        ) from None
    return pandas.DataFrame(rows)


def _block_list(blocks: Union[str, Sequence[Dims]]) -> List[str]:
    if isinstance(blocks, str):
        return [b.strip() for b in blocks.split(",")]
    out = []
    for b in blocks:
        d = _dims(b, "blocks")
        if d is None:
            raise TypeError("blocks must not contain None")
        out.append(d)
    return out


def list_kernels() -> List[Dict[str, str]]:
    """The shipped kernels: ``[{"name": ..., "description": ...}, ...]``."""
    return [{"name": n, "description": d} for n, d in _native.list_kernels()]


def list_hw() -> List[Dict[str, str]]:
    """The shipped GPU configurations: ``[{"name": ..., "description": ...}, ...]``."""
    return [{"name": n, "description": d} for n, d in _native.list_hw()]


def list_models() -> List[Dict[str, Any]]:
    """The models: name, summary, what they apply to, and their constants (name, default, doc)."""
    return json.loads(_native.list_models())


def show(name: str) -> str:
    """The text of a shipped kernel or GPU configuration, a template to start from."""
    return _native.show(name)

