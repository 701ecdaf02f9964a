# placer in a container, for placer cluster k8s (docs/cluster.md):
#   docker build -t registry.example/placer:v1 . && docker push registry.example/placer:v1
# The build stage compiles placer (no CUDA: the roofline evaluator needs no
# GPU); the runtime stage is Debian slim with placer on the PATH.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=container
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=${VERSION}" -o /out/placer ./cmd/placer

FROM debian:bookworm-slim
COPY --from=build /out/placer /usr/local/bin/placer
# The cells' shared folder: a PersistentVolumeClaim is mounted here.
VOLUME /cells
WORKDIR /cells
ENTRYPOINT []
CMD ["placer", "--help"]
