# syntax=docker/dockerfile:1.7
# The one base of Plimsoll's three images (operator, generator, mock).
#
# It holds the project's wheel with the generator's and mock's dependencies
# (the same hot-path set: uvloop, httptools, psutil, plus the API's pydantic,
# PyYAML, hdrhistogram), so the generator and mock images are this image plus
# an entrypoint, and the operator adds its own extras on top: the layers are
# shared, pulled once per node.
#
# PYTHON_IMAGE is one of two roots (scripts/build-images picks it):
# - BASE=debian (offline, the default): Debian bookworm's python3 in a minimal
#   root built by scripts/build-debian-root (mmdebstrap), versions in
#   images/debian-base.lock and in the image's labels;
# - BASE=python (a registry is reachable): the official Python image pinned by
#   digest in images/python-base.lock.
# Either way every Python dependency is pinned by dist/images/constraints.txt
# and timestamps follow SOURCE_DATE_EPOCH. Non-root (uid 65532) and
# read-only-rootfs friendly: no bytecode written at run time, HOME and caches
# in /tmp (an emptyDir in the pods).

# No default on purpose: an unpinned base would make builds irreproducible.
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

# The user is written into /etc/passwd directly: the Debian root has no useradd
# (no passwd package), and this works on both roots alike. The venv starts
# without pip: pip is only a build tool here (below).
RUN echo 'plimsoll:x:65532:65532:plimsoll:/tmp:/usr/sbin/nologin' >> /etc/passwd \
    && echo 'plimsoll:x:65532:' >> /etc/group \
    && python3 -m venv --without-pip /opt/plimsoll

# The wheel holds the generator's hot path compiled on the build host for Python 3.11
# (hatch_build.py), the Python of both roots; scripts/build-images refuses another.
# The wheel, the constraints and the build host's CA bundle (pip trusts what the
# host trusts, e.g. a proxy's CA) are bind-mounted, so none stays in a layer.
# Their digest is an argument so that a changed wheel misses the layer cache
# (podman's cache key does not cover a bind mount's content). pip comes and goes
# in the same step (23 MB no image needs at run time). The .pyc files are
# hash-based and never re-checked: the build rewrites every mtime, and a
# read-only root could not hold recompiled ones.
ARG PLIMSOLL_WHEEL_DIGEST
RUN --mount=type=bind,source=dist/images,target=/dist \
    python -m ensurepip --default-pip >/dev/null \
    && python -m pip install --no-cache-dir --cert /dist/ca-certificates.crt \
        --constraint /dist/constraints.txt "$(ls /dist/plimsoll_capacity-*.whl)[generator,mock]" \
    && python -m pip uninstall --yes --quiet pip setuptools \
    && python -m compileall -q -f --invalidation-mode unchecked-hash /opt/plimsoll

WORKDIR /tmp
USER 65532:65532
