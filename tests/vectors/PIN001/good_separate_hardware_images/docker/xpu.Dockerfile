FROM intel/xpu
RUN pip install "transformers==4.55.0"
