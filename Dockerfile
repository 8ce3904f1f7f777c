# Builds the kubesched image: docker build -t REGISTRY/kubesched:TAG .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /kubesched ./cmd/kubesched

FROM gcr.io/distroless/static:nonroot
COPY --from=build /kubesched /usr/local/bin/kubesched
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kubesched"]
