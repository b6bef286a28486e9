FROM rocm/sgl-dev:latest
COPY scripts/ci/amd/image_install.sh /tmp/install.sh
RUN bash /tmp/install.sh
