FROM rocm/sgl-dev:latest
RUN pip install "transformers==4.56.0"
