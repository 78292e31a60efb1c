"""Type stubs of gputraffic._native, the compiled half of the package (python/src/lib.rs).

Use the functions of :mod:`gputraffic`; these take the command line's arguments as plain
strings and return its JSON text.
"""

from typing import Dict, List, Optional, Tuple, Union

class Kernel:
    """A kernel description parsed from TOML text (the format of docs/trace-format.md).

    Raises ValueError naming ``source``, the line and the column when the text is malformed.
    """

    def __init__(self, text: str, source: str = "<kernel text>") -> None: ...
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
