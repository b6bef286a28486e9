FROM python:3.12
RUN pip install "transformers==4.52.0"
