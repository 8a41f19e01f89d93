# The HA profile's authority nodes and etcd (docker compose --profile ha; docs/deployment.md):
# Debian's patroni, PostgreSQL 15 and etcd, the packages scripts/ha.sh runs on a machine.
FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      patroni python3-etcd postgresql-15 etcd-server etcd-client curl ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/patroni /var/lib/etcd \
 && chown postgres:postgres /var/lib/postgresql/patroni /var/lib/etcd \
 && chmod 0700 /var/lib/postgresql/patroni
# PostgreSQL refuses root; etcd runs as the same user.
USER postgres
