"""The calibrated compute kernel hits its target time within a factor."""

from commbench.cpu import CpuExploit


def test_calibrated_kernel_scales_with_target():
    k = CpuExploit()
    k.calibrate()
    assert k.reps_per_second > 0 and k.mflops > 0
    short = min(k.exploit(0.002, init=True) for _ in range(3))
    long = min(k.exploit(0.02, init=True) for _ in range(3))
    assert long > 3 * short  # ten times the work takes clearly longer
    assert k.exploit(0, init=True) == 0.0
    again = k.exploit(0.02, init=False)
    assert again > 0
