"""Buffer allocation kinds: huge pages on/off really change the backing pages."""

import re

import pytest

from commbench import buffers


def anon_huge_kb() -> int:
    with open("/proc/self/smaps_rollup") as f:
        return int(re.search(r"AnonHugePages:\s+(\d+)", f.read()).group(1))


@pytest.mark.skipif(
    buffers.thp_mode() not in ("always", "madvise"), reason="transparent huge pages disabled here"
)
def test_hugepages_on_and_off_change_the_backing():
    before = anon_huge_kb()
    on = buffers.Allocation(8 << 20, "mmap", "on")
    on.array[:] = 1
    got_on = anon_huge_kb() - before
    before = anon_huge_kb()
    off = buffers.Allocation(8 << 20, "mmap", "off")
    off.array[:] = 1
    got_off = anon_huge_kb() - before
    assert got_on >= 4096, got_on  # at least two 2 MiB pages of the 8 MiB buffer
    assert got_off == 0
    assert on.array.ctypes.data % buffers.HUGE == 0  # aligned so whole extents qualify
    on.free()
    off.free()


@pytest.mark.skipif(
    buffers.thp_mode() not in ("always", "madvise"), reason="transparent huge pages disabled here"
)
@pytest.mark.parametrize("kind", ["mmap", "numpy"])
@pytest.mark.parametrize("nbytes", [4096, 1 << 20, 3 << 20])
def test_hugepages_on_backs_buffers_of_any_size(kind, nbytes):
    """A 1 MiB buffer used to get no huge page with --hugepages on (no aligned 2 MiB
    extent inside it) and moved data at half the speed of one that had."""
    a = buffers.Allocation(nbytes, kind, "on")
    a.array[:] = 1
    assert a.array.nbytes == nbytes and a.array.ctypes.data % buffers.HUGE == 0
    # The mapping holding the buffer, advised, with a huge page for every extent the
    # buffer spans (numpy's allocator may hand back memory that already had them).
    flags, huge_kb = vma_of(a.array.ctypes.data)
    assert "hg" in flags and huge_kb >= 2048 * -(-nbytes // buffers.HUGE), (flags, huge_kb)
    a.free()


def vma_of(addr: int) -> tuple[list[str], int]:
    """(VmFlags, AnonHugePages kB) of the mapping that holds addr (/proc/self/smaps)."""
    inside, huge_kb = False, 0
    with open("/proc/self/smaps") as f:
        for line in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
            if m:
                inside = int(m.group(1), 16) <= addr < int(m.group(2), 16)
            elif inside and line.startswith("AnonHugePages:"):
                huge_kb = int(line.split()[1])
            elif inside and line.startswith("VmFlags:"):
                return line.split()[1:], huge_kb
    return [], 0
