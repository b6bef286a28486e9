#!/bin/bash
pip install "numba==0.64.0"  # [PIN001]
