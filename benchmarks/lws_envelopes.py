"""LightWave envelopes: kbspline's Envelope against the tests' plain-Python
transcription of the SDK's evaluation, 10^6 random times over the keys and
a cycle of repeat before and offset repeat after them.

    PYTHONPATH=$PWD python benchmarks/lws_envelopes.py
"""
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
import lws_oracle  # noqa: E402
from lws_writer import random_keys  # noqa: E402
from kbspline.formats.lightwave_envelope import Envelope  # noqa: E402


def best(f, repeat=5):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    key_times = sorted(set(float(x) for x in rng.uniform(0, 10, 64)))
    t = rng.uniform(-10, 20, 1_000_000)
    for label, version in (("TCB and linear spans", 1), ("every span type", 5)):
        keys = [(k[0], k[1], k[2], tuple(k[3:])) for k in random_keys(rng, version, key_times)]
        env = Envelope(keys, "repeat", "offset_repeat")
        ours = best(lambda: env(t))
        few = t[:20_000]
        theirs = best(lambda: [lws_oracle.evaluate(keys, "repeat", "offset_repeat", x)
                               for x in few], 1) * len(t) / len(few)
        print(f"{label}, 64 keys: Envelope {ours * 1e3:.0f} ms per 10^6 times, "
              f"plain Python {theirs:.1f} s ({theirs / ours:.0f}x)")


if __name__ == "__main__":
    main()
