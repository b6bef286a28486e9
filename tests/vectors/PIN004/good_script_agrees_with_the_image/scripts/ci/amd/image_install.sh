pip install "numba==0.65.1" "xxhash==3.5.0"
