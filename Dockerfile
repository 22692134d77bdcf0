# matchplane: one static-ish binary for api, worker and migrate.
# Build: docker build -t matchplane .    Run: docker run -p 8080:8080 matchplane api
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --bin matchplane \
 && strip target/release/matchplane

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 matchplane \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin matchplane
COPY --from=build /src/target/release/matchplane /usr/local/bin/matchplane
USER 10001:10001
# The API's own default is 127.0.0.1:8080, out of reach from outside a
# container: listen on every interface here (docs/deployment.md).
ENV MATCHPLANE_LISTEN=0.0.0.0:8080
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/matchplane"]
CMD ["api"]
