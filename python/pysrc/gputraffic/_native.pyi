"""Type stubs of gputraffic._native, the compiled half of the package (python/src/lib.rs).

Use the functions of :mod:`gputraffic`; these take the command line's arguments as plain
strings and return its JSON text.
"""

from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

class Kernel:
    """A kernel description parsed from TOML text (the format of docs/trace-format.md), or
    lifted from CUDA source or PTX text (``from_cuda``, ``from_ptx``; ``text`` is then the
    lifted trace).

    Raises ValueError naming ``source``, the line and the column when the text is malformed,
    and with the command line's one-line message when a kernel cannot be lifted.
    """

    def __init__(self, text: str, source: str = "<kernel text>") -> None: ...
    @staticmethod
    def from_cuda(
        source_text: str,
        entry: Optional[str] = None,
        *,
        options: List[str] = ...,
        nvcc: Optional[str] = None,
        hw: str = "h200",
        grid: Union[None, str, Sequence[Union[str, int]]] = None,
        registers: Optional[int] = None,
        extents: Optional[Mapping[str, str]] = None,
        updates: Optional[str] = None,
        params: Optional[Mapping[str, int]] = None,
        source: str = "<cuda source>",
    ) -> "Kernel":
        """Lifts a kernel from CUDA source text through nvcc (docs/cuda.md)."""
    @staticmethod
    def from_ptx(
        ptx_text: str,
        entry: Optional[str] = None,
        *,
        cuda: Optional[str] = None,
        hw: str = "h200",
        grid: Union[None, str, Sequence[Union[str, int]]] = None,
        registers: Optional[int] = None,
        extents: Optional[Mapping[str, str]] = None,
        updates: Optional[str] = None,
        params: Optional[Mapping[str, int]] = None,
        source: str = "<ptx text>",
    ) -> "Kernel":
        """Lifts a kernel from PTX text; ``cuda`` (its source) names the parameters."""
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def params(self) -> Dict[str, int]: ...
    @property
    def default_block(self) -> Tuple[int, int, int]: ...

def simulate(
    kernel: Union[str, Kernel],
    hw: str,
    block: Optional[str],
    domain: Optional[str],
    set: List[str],
    clock: str,
    compare: Optional[str],
    threads: Optional[int],
    infinite_l1: bool,
    infinite_l2: bool,
    compulsory: bool,
    sample: bool,
    by_array: bool,
) -> Tuple[str, List[str]]: ...
def predict(
    kernel: Union[str, Kernel],
    model: str,
    hw: str,
    block: Optional[str],
    domain: Optional[str],
    set: List[str],
    clock: str,
) -> Tuple[str, List[str]]: ...
def rank(
    kernel: Union[str, Kernel],
    blocks: List[str],
    hw: str,
    domain: Optional[str],
    set: List[str],
    clock: str,
    threads: Optional[int],
    sample: bool,
    exact: bool,
) -> Tuple[str, List[str]]: ...
def sweep(
    kernel: Union[str, Kernel],
    blocks: List[str],
    hws: List[str],
    domains: List[str],
    set: List[str],
    l1_scales: List[float],
    l2_scales: List[float],
    models: List[str],
    clock: str,
    threads: Optional[int],
    sample: bool,
) -> Tuple[str, List[str]]: ...
def list_kernels() -> List[Tuple[str, str]]: ...
def list_hw() -> List[Tuple[str, str]]: ...
def list_models() -> str: ...
def show(name: str) -> str: ...
