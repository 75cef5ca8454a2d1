# Builds the manager as a static binary and ships it on a distroless, non-root base. The image carries the score
# agent too (/score-agent, cmd/score-agent), which config/addon's AddOnTemplate runs on the managed clusters.
#
#   make docker-build IMG=<registry>/placement-manifestwork:<tag>     (docker build -t $IMG .)
#   docker buildx build --platform linux/amd64,linux/arm64 -t $IMG --push .
#
# test/deploy (TestDockerfileBuild) replays the COPY and go build steps of this stage in a scratch directory and
# runs the binary they produce, so a package missing from the COPY lines or a broken build command fails
# `make test`.

# The builder runs on the build machine's platform and cross-compiles for the target platform (BuildKit sets
# BUILDPLATFORM, TARGETOS and TARGETARCH; without them it builds for linux on the builder's architecture).
FROM --platform=${BUILDPLATFORM} golang:1.25 AS builder
ARG TARGETOS
ARG TARGETARCH
WORKDIR /workspace
# Dependencies first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
# Every package of this module the manager and the score agent import lives under these directories
# (`go list -deps ./cmd ./cmd/score-agent`).
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY pkg/ pkg/
COPY internal/ internal/
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o score-agent ./cmd/score-agent
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o manager ./cmd

# distroless/static: no shell, no package manager, CA certificates and /etc/passwd only. The nonroot tag runs
# as UID/GID 65532; the Deployment's runAsNonRoot check needs the numeric USER below.
FROM gcr.io/distroless/static:nonroot
LABEL org.opencontainers.image.title="placement-manifestwork" \
      org.opencontainers.image.description="PlacementManifestWork controller-manager for Open Cluster Management hubs" \
      org.opencontainers.image.source="https://github.com/open-cluster-management-io/placement-manifestwork"
WORKDIR /
COPY --from=builder /workspace/score-agent .
COPY --from=builder /workspace/manager .
USER 65532:65532
ENTRYPOINT ["/manager"]
