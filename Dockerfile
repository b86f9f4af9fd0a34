# Multi-stage build: compile a static ductor binary, ship it alone.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# docker build --build-arg VERSION=v1.4.0 stamps the version /healthz, the
# User-Agent of http steps and ductor_build_info report.
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags="-s -w -X github.com/ductor/ductor/app/version.version=${VERSION}" -o /out/ductor .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ductor /ductor
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/ductor"]
CMD ["serve"]
