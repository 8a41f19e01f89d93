# Container image of the gateway (and the demo providers).
#   docker build -t write-gateway .     or     docker compose up --build
# Build stage: scripts/deps.sh's build group, by running deps.sh itself, so the image and the
# development machines build with one package list (scripts/check-container.py, run by
# scripts/test.sh, refuses any other install here). Tests and local runs need more (PostgreSQL,
# Chromium, ccache): deps.sh's other group, not in the image.
FROM debian:12 AS build
WORKDIR /src
COPY scripts/deps.sh scripts/deps.sh
RUN scripts/deps.sh build && rm -rf /var/lib/apt/lists/*
COPY . .
# 2 jobs by default: a Beast translation unit takes ~830 MB to compile.
ARG BUILD_JOBS=2
# .git is not in the build context: pass the commit for gateway_build_info
# (docker build --build-arg GATEWAY_COMMIT=$(git rev-parse --short=12 HEAD) .); "unknown" otherwise.
ARG GATEWAY_COMMIT=unknown
ENV GATEWAY_COMMIT=${GATEWAY_COMMIT}
# The same flags as scripts/build.sh's release tree (-O3, no debug info, write-gateway linked
# as one program), without its profile and so without BOLT's layout (scripts/pgo.sh and
# scripts/bolt.sh train against a PostgreSQL, which this stage does not have).
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG" -DGATEWAY_LTO=ON \
 && cmake --build /build -j"${BUILD_JOBS}" --target write-gateway demo-provider

# Runtime stage: the shared libraries of the build packages (check-container.py checks each
# against dpkg's dependencies of the build group).
FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpqxx-6.4 libpq5 libssl3 libmimalloc2.0 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --no-create-home --shell /usr/sbin/nologin write-gateway \
 && install -d -o write-gateway -g write-gateway -m 0700 /var/lib/write-gateway
COPY --from=build /build/bin/write-gateway /build/bin/demo-provider /usr/local/bin/
COPY config/ /etc/write-gateway/
# /var/lib/write-gateway: the authority guard's state file (config/docker-ha.json), on a volume.
# Fail the image build, not the first start, if a shared library is missing at runtime.
RUN ! ldd /usr/local/bin/write-gateway /usr/local/bin/demo-provider | grep 'not found'
USER write-gateway
EXPOSE 8080
# The gateway drains in-flight forwards on SIGTERM (docker stop's signal).
CMD ["write-gateway", "--config", "/etc/write-gateway/docker.json"]
