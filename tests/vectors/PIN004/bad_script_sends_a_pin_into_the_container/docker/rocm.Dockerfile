FROM rocm/sgl-dev:latest
RUN pip install "numba==0.65.1"
