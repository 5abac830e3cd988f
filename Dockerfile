# The manager image. Build: make docker-build IMG=<image> (or `make image-offline` without Docker).
#
# Bases are pinned by digest, the tag kept beside it: the tag says what the image is, the digest
# which one is built on; moving to a newer one is a reviewed change (make pin-images resolves
# the tags again where a registry answers).
# golang:1.26 (Go 1.26.5, 2026-08-05; Go 1.24 is out of support), docker-library/repo-info.
FROM golang:1.26@sha256:6cd10a6fcc5eadd62008fc2ad8056b38971cafd42f44d55297f18be8adc86410 AS builder
ARG TARGETOS
ARG TARGETARCH

WORKDIR /workspace
# Dependencies first, so source edits do not re-download modules.
COPY go.mod go.sum ./
RUN go mod download

COPY cmd/ cmd/
COPY api/ api/
COPY controllers/ controllers/
COPY internal/ internal/

# Static binary: the runtime image has no libc.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o manager ./cmd
# The nonroot user's names, as make image-offline writes them.
RUN mkdir -p rootfs/etc && \
    printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >rootfs/etc/passwd && \
    printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >rootfs/etc/group

# No base at all, as make image-offline builds it (the image the end-to-end suites run): the
# manager needs nothing of one. It is static, carries its time zones (time/tzdata), trusts the API
# server through its ServiceAccount's CA, and keeps the metrics certificate in memory.
FROM scratch
WORKDIR /
COPY --from=builder /workspace/rootfs/etc/ /etc/
COPY --from=builder /workspace/manager /manager
# Numeric, so Kubernetes' runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/manager"]
