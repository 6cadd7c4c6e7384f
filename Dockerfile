# syntax=docker/dockerfile:1
# yace in a minimal image: one static binary (musl), no shell, no package
# manager, run as a non-root user. It is the image `yace k8s render` and
# `yace k8s run` put in their pods (--image); its entrypoint is `yace`.
#
#   docker build --build-arg YACE_COMMIT=$(git rev-parse --short=12 HEAD) \
#       -t registry.example/yace:0.1 .
#   docker run --rm registry.example/yace:0.1 run https://example.com/ -d 10s
#
# The build stage is Alpine, whose Rust targets musl natively: the binary
# links statically and needs nothing from the runtime image but CA
# certificates (HTTPS targets are verified against the system's roots).

ARG RUST_VERSION=1.95.0

FROM rust:${RUST_VERSION}-alpine AS build
ARG RUST_VERSION
# The image's toolchain, as rust-toolchain.toml pins it (without the file's
# rustfmt and clippy, which a build does not need).
ENV RUSTUP_TOOLCHAIN=${RUST_VERSION}
# A C compiler and musl's headers: ring's C and assembly are built with
# them. Unpinned on purpose: the versions are the image's Alpine release's.
# hadolint ignore=DL3018
RUN apk add --no-cache gcc musl-dev
WORKDIR /src
COPY . .
# `yace --version`'s commit (the build context has no .git):
# docker build --build-arg YACE_COMMIT=$(git rev-parse --short=12 HEAD) .
ARG YACE_COMMIT
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --profile dist --locked -p yace \
    && install -D -m 0755 target/dist/yace /out/yace
# Refuse a binary that would need a dynamic loader; prove it runs.
RUN readelf -l /out/yace > /tmp/headers \
    && if grep -q 'program interpreter' /tmp/headers; then \
        echo "yace is not static: it asks for a dynamic loader" >&2; exit 1; \
    fi \
    && /out/yace --version

# distroless/static: CA certificates, /etc/passwd with `nonroot` (65532),
# tzdata; no shell. The same user the rendered pods run as.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/yace /usr/local/bin/yace
USER 65532:65532
ENTRYPOINT ["yace"]
CMD ["--help"]
