FROM rocm/sgl-dev:latest
RUN pip install "torch==2.9.0"
