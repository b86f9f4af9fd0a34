# Multi-stage build: compile a static ductor binary, ship it alone.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
COPY sdk/go.mod sdk/
RUN go mod download
COPY . .
# docker build --build-arg VERSION=v1.4.0 stamps the version `ductor version`,
# /healthz, the User-Agent of http steps and ductor_build_info report.
ARG VERSION=
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags="-s -w ${VERSION:+-X github.com/ductor/ductor/app/version.version=${VERSION}}" -o /out/ductor .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ductor /ductor
USER nonroot:nonroot
EXPOSE 8080
# /readyz on DUCTOR_ADDR for a replica that serves HTTP; the database for
# a workers-only one. The image has no shell or curl: ductor checks itself.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 CMD ["/ductor", "healthcheck"]
ENTRYPOINT ["/ductor"]
CMD ["serve"]
