# The kvbench image, for agents on Kubernetes (docs/distributed.md):
#
#   docker build --build-arg VERSION=$(git describe --always --dirty) -t REGISTRY/kvbench:TAG .
#
# Stage "build" compiles a static binary (CGO_ENABLED=0: no libc, no
# dynamic loader); the final stage holds that binary alone and runs it as
# an unprivileged user. The entrypoint is kvbench: "kvbench k8s job" gives
# the arguments only. TestDockerfile checks this file's stages, USER and
# ENTRYPOINT, and that the binary builds static.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/kvbench/kvbench/internal/cli.version=${VERSION}" \
    -o /out/kvbench ./cmd/kvbench

FROM gcr.io/distroless/static-debian12:nonroot AS runtime
COPY --from=build /out/kvbench /usr/local/bin/kvbench
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kvbench"]
