#!/usr/bin/python3
"""Writes the fixed input of the MLP demo (scripts/demo.sh) and its expected output.

The inputs follow closed-form formulas, so the demo needs no data files; the expected output is
computed here with numpy in float64, independently of RAL.

  mlp_demo_data.py <out-dir>   ->  x.npy w1.npy b1.npy w2.npy b2.npy expected.npy
"""
import os
import sys

import numpy as np


def weights():
    """w1, b1, w2, b2 of the demo MLP, from closed-form formulas."""
    r, c = np.meshgrid(np.arange(128), np.arange(256), indexing="ij")
    w1 = (np.sin(0.37 * r + 0.11 * c) / np.sqrt(128)).astype(np.float32)
    b1 = (0.05 * np.cos(np.arange(256))).astype(np.float32)
    r, c = np.meshgrid(np.arange(256), np.arange(10), indexing="ij")
    w2 = (np.cos(0.23 * r - 0.7 * c) / np.sqrt(256)).astype(np.float32)
    b2 = (0.1 * np.arange(10) - 0.5).astype(np.float32)
    return w1, b1, w2, b2


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    i = np.arange(2)[:, None]
    k = np.arange(128)
    x = np.cos(0.1 * (i + 1) * k + i).astype(np.float32)
    w1, b1, w2, b2 = weights()
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0.0)
    y = (h @ w2 + b2).astype(np.float32)
    for name, a in (("x", x), ("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2), ("expected", y)):
        np.save(os.path.join(out, name + ".npy"), a)


if __name__ == "__main__":
    main()
