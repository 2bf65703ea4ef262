# syntax=docker/dockerfile:1.7
# The one base of Plimsoll's three images (operator, generator, mock).
#
# It holds the project's wheel with the generator's and mock's dependencies
# (the same hot-path set: uvloop, httptools, psutil, plus the API's pydantic,
# PyYAML, hdrhistogram), so the generator and mock images are this image plus
# an entrypoint, and the operator adds its own extras on top: the layers are
# shared, pulled once per node.
#
# Reproducible: the Python image is pinned by digest (PYTHON_IMAGE, passed by
# scripts/build-images from images/python-base.lock), every dependency is
# pinned by dist/constraints.txt, and timestamps follow SOURCE_DATE_EPOCH.
# Non-root (uid 65532) and read-only-rootfs friendly: no bytecode written at
# run time, HOME and caches in /tmp (an emptyDir in the pods).

# No default on purpose: an unpinned base would make builds irreproducible.
# scripts/build-images passes e.g. python:3.11-slim-bookworm@sha256:<digest>.
ARG PYTHON_IMAGE
FROM ${PYTHON_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    VIRTUAL_ENV=/opt/plimsoll \
    PATH=/opt/plimsoll/bin:$PATH \
    HOME=/tmp

RUN groupadd --system --gid 65532 plimsoll \
    && useradd --system --uid 65532 --gid 65532 --home-dir /tmp --no-create-home \
       --shell /usr/sbin/nologin plimsoll \
    && python -m venv /opt/plimsoll

# The wheel and constraints are bind-mounted, so neither stays in a layer.
RUN --mount=type=bind,source=dist/images,target=/dist \
    pip install --no-cache-dir --constraint /dist/constraints.txt \
        "$(ls /dist/plimsoll-*.whl)[generator,mock]" \
    && python -m compileall -q /opt/plimsoll

WORKDIR /tmp
USER 65532:65532
