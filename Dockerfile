# Container image of the gateway (and the demo providers).
#   docker build -t write-gateway .     or     docker compose up --build
# Build stage: the same Debian 12 packages as scripts/deps.sh, minus what only tests and local
# runs need (PostgreSQL server, ccache).
FROM debian:12 AS build
# Boost pinned to 1.81: an unversioned libboost-*-dev would pull 1.74 and remove 1.81.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libboost1.81-dev libboost-url1.81-dev libboost-json1.81-dev \
      libpqxx-dev libpq-dev nlohmann-json3-dev doctest-dev libssl-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# 2 jobs by default: a Beast translation unit takes ~830 MB to compile.
ARG BUILD_JOBS=2
# .git is not in the build context: pass the commit for gateway_build_info
# (docker build --build-arg GATEWAY_COMMIT=$(git rev-parse --short=12 HEAD) .); "unknown" otherwise.
ARG GATEWAY_COMMIT=unknown
ENV GATEWAY_COMMIT=${GATEWAY_COMMIT}
# The same flags as scripts/build.sh's release tree: -O2, no debug info.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
 && cmake --build /build -j"${BUILD_JOBS}" --target write-gateway demo-provider

FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpqxx-6.4 libpq5 libssl3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --no-create-home --shell /usr/sbin/nologin write-gateway
COPY --from=build /build/bin/write-gateway /build/bin/demo-provider /usr/local/bin/
COPY config/ /etc/write-gateway/
# Fail the image build, not the first start, if a shared library is missing at runtime.
RUN ! ldd /usr/local/bin/write-gateway /usr/local/bin/demo-provider | grep 'not found'
USER write-gateway
EXPOSE 8080
# The gateway drains in-flight forwards on SIGTERM (docker stop's signal).
CMD ["write-gateway", "--config", "/etc/write-gateway/docker.json"]
