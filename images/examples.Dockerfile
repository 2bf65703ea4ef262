# syntax=docker/dockerfile:1.7
# The example targets (examples/targets/*.py, standard library only) on the shared
# base, so every example's `command` (python examples/targets/<target>.py) runs in a
# pod as it runs locally. Built by scripts/build-images from the repository root (which
# copies them into dist/images/, the only build context the images see):
#   docker build -f images/examples.Dockerfile --build-arg BASE_IMAGE=plimsoll-base:<v> .
# The examples name it as `plimsoll-examples:<version>`.
ARG BASE_IMAGE=plimsoll-base:latest
FROM ${BASE_IMAGE}

COPY dist/images/examples/targets/ /app/examples/targets/
WORKDIR /app
USER 65532:65532
