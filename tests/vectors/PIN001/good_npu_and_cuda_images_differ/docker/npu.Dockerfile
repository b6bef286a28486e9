FROM ascend/cann:8.2
RUN pip install "torch==2.8.0" "torch-npu==2.8.0" "numpy==1.26.3"
