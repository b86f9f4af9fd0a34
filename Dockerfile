# Multi-stage build: compile a static ductor binary, ship it alone.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ductor .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ductor /ductor
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/ductor"]
CMD ["serve"]
