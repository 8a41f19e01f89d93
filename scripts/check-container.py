#!/usr/bin/env python3
"""Checks that Dockerfile and docker-compose.yml stay true without Docker (none runs on the
development or CI machines). Run by scripts/test.sh; `--self-test` also shows that each check
catches the mistake it is for, on altered copies.

Dockerfile:
  - the build stage installs its packages only by running `scripts/deps.sh build`, the list the
    development machines and CI build with (no apt-get install of its own, so no second list);
  - every package the runtime stage installs is ca-certificates or the runtime library that a
    build package depends on (libpqxx-dev -> libpqxx-6.4, ...), as this machine's dpkg says;
  - the config file CMD names is in config/ (COPY config/ /etc/write-gateway/), and EXPOSE is
    its listen port.
docker-compose.yml (parsed as YAML):
  - each service's image, build, depends_on (a service_healthy one has a healthcheck), volumes;
  - the gateway's --config file exists in config/; its listen port is the published container
    port; every environment variable the config names (url_env, credential env, ...) is set in
    the gateway's environment; the database URL points at the postgres service;
  - each provider's base_url is a compose service running demo-provider with that --kind and
    --port, listening on 0.0.0.0, holding exactly the credentials (same variables, same
    defaults) the gateway injects for it;
  - the same for every other service running write-gateway (the `ha` profile's gateways); a
    multi-host database URL names only compose services, carries
    target_session_attrs=read-write, and lists every Patroni node; a guard_state_file lies on a
    volume of that gateway's own;
  - profiles: a service that runs by default depends on no service of a profile; a build other
    than the root Dockerfile names a Dockerfile that exists, and services sharing an image share
    its build; each Patroni node's PATRONI_NAME is unique and its mounted config file exists.
"""
import copy
import json
import os
import re
import subprocess
import sys

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Problems:
    def __init__(self):
        self.items = []

    def add(self, message):
        self.items.append(message)


def dockerfile_instructions(text):
    """(instruction, argument) pairs, continuation lines joined, comments dropped."""
    out, current = [], ''
    for line in text.split('\n'):
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith('#')):
            continue
        if stripped.startswith('#'):
            continue
        current += ' ' + stripped.rstrip('\\').strip() if current else stripped.rstrip('\\').strip()
        if not stripped.endswith('\\'):
            word, _, rest = current.partition(' ')
            out.append((word.upper(), rest.strip()))
            current = ''
    return out


def stages(instructions):
    """[(from_argument, [(instruction, argument), ...]), ...]"""
    out = []
    for word, arg in instructions:
        if word == 'FROM':
            out.append((arg, []))
        elif out:
            out[-1][1].append((word, arg))
    return out


def apt_installed(run_argument):
    """Package names an `apt-get install` in a RUN argument names (options dropped)."""
    names = []
    for command in re.split(r'&&|;', run_argument):
        words = command.split()
        if 'apt-get' in words and 'install' in words:
            for w in words[words.index('install') + 1:]:
                if not w.startswith('-'):
                    names.append(w)
    return names


def check_dockerfile(text, build_packages, depends, problems):
    st = stages(dockerfile_instructions(text))
    if len(st) < 2:
        problems.add('Dockerfile: expected a build stage and a runtime stage')
        return None
    build, runtime = st[0][1], st[-1][1]
    runs = [arg for word, arg in build if word == 'RUN']
    if not any(re.search(r'(^|\s|&&)(\./)?scripts/deps\.sh build(\s|&&|$)', r) for r in runs):
        problems.add('Dockerfile build stage: no `RUN scripts/deps.sh build` (the one package list)')
    for r in runs:
        extra = apt_installed(r)
        if extra:
            problems.add('Dockerfile build stage: installs ' + ' '.join(extra) +
                         ' itself; add them to scripts/deps.sh (build group) instead')
    copied_deps = any(word == 'COPY' and 'scripts/deps.sh' in arg for word, arg in build)
    if not copied_deps:
        problems.add('Dockerfile build stage: scripts/deps.sh is not copied in before it runs')
    libraries = {d for p in build_packages for d in depends.get(p, [])}
    for word, arg in runtime:
        if word == 'RUN':
            for pkg in apt_installed(arg):
                if pkg != 'ca-certificates' and pkg not in libraries:
                    problems.add('Dockerfile runtime stage: ' + pkg + ' is not a runtime library any '
                                 'build package depends on (dpkg says: ' + ', '.join(sorted(libraries)) + ')')
    cmd = [arg for word, arg in runtime if word == 'CMD']
    exposed = [arg for word, arg in runtime if word == 'EXPOSE']
    return {'cmd': json.loads(cmd[-1]) if cmd else [], 'expose': exposed}


def config_path(command, problems, where):
    if '--config' not in command:
        problems.add(where + ': no --config')
        return None
    path = command[command.index('--config') + 1]
    prefix = '/etc/write-gateway/'
    if not path.startswith(prefix):
        problems.add(where + ': --config ' + path + ' is not under ' + prefix + ' (where the image copies config/)')
        return None
    return 'config/' + path[len(prefix):]


def env_names(node):
    """Every environment variable a config names: values of `env` and `*_env` keys."""
    out = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if (k == 'env' or k.endswith('_env')) and isinstance(v, str):
                out.add(v)
            else:
                out |= env_names(v)
    elif isinstance(node, list):
        for v in node:
            out |= env_names(v)
    return out


def references(text):
    """{VAR: default} for each ${VAR:-default} or ${VAR} in a compose value."""
    return {m.group(1): m.group(3) for m in re.finditer(r'\$\{(\w+)(:-([^}]*))?\}', str(text))}


def arg_after(command, flag):
    return command[command.index(flag) + 1] if flag in command else None


def database_hosts(url):
    """The host names of a database URL: `host=NAME` (key=value) or a postgresql:// URL's
    comma-separated host list."""
    m = re.match(r'postgres(?:ql)?://(?:[^@/]*@)?([^/?]*)', url)
    if m:
        return [h.rsplit(':', 1)[0] for h in m.group(1).split(',') if h]
    host = re.search(r'host=(\S+)', url)
    return host.group(1).split(',') if host else []


def patroni_nodes(services):
    return {name: svc for name, svc in services.items() if (svc.get('command') or [None])[0] == 'patroni'}


def check_compose(compose, read_config, docker, problems):
    services = compose.get('services') or {}
    builds = {}
    for name, svc in services.items():
        profiles = svc.get('profiles') or []
        for dep, how in (svc.get('depends_on') or {}).items():
            if dep not in services:
                problems.add('compose: ' + name + ' depends on unknown service ' + dep)
                continue
            if (how or {}).get('condition') == 'service_healthy' and 'healthcheck' not in services[dep]:
                problems.add('compose: ' + name + ' waits for ' + dep + ' to be healthy, which has no healthcheck')
            dep_profiles = services[dep].get('profiles') or []
            if dep_profiles and not set(dep_profiles) & set(profiles):
                problems.add('compose: ' + name + ' depends on ' + dep + ', which runs only with profile ' +
                             ', '.join(dep_profiles))
        for volume in svc.get('volumes') or []:
            source = str(volume).split(':')[0]
            if source.startswith(('.', '/')):
                if source.startswith('.') and not os.path.exists(source):
                    problems.add('compose: ' + name + ' mounts ' + source + ', which does not exist')
            elif source not in (compose.get('volumes') or {}):
                problems.add('compose: ' + name + ' mounts undeclared volume ' + source)
        build = svc.get('build')
        if build is not None and build != '.':
            if not isinstance(build, dict) or build.get('context') != '.' or not os.path.isfile(build.get('dockerfile', '')):
                problems.add('compose: ' + name + ' builds from ' + str(build) + ', not the root Dockerfile or one that exists')
        if build is not None and svc.get('image'):
            key = json.dumps(build, sort_keys=True)
            if builds.setdefault(svc['image'], key) != key:
                problems.add('compose: ' + name + ' builds image ' + svc['image'] + ' differently from another service')

    nodes = patroni_nodes(services)
    names = {}
    for name, svc in nodes.items():
        pname = str((svc.get('environment') or {}).get('PATRONI_NAME', ''))
        if pname in names:
            problems.add('compose: Patroni nodes ' + names[pname] + ' and ' + name + ' share PATRONI_NAME ' + pname)
        names[pname] = name
        for key in ('PATRONI_RESTAPI_CONNECT_ADDRESS', 'PATRONI_POSTGRESQL_CONNECT_ADDRESS'):
            addr = str((svc.get('environment') or {}).get(key, ''))
            if addr.split(':')[0] != name:
                problems.add('compose: Patroni node ' + name + ' gives ' + key + ' ' + addr + ', not its own name')

    if 'gateway' not in services:
        problems.add('compose: no gateway service')
    for name, svc in services.items():
        if (svc.get('command') or [None])[0] == 'write-gateway' or name == 'gateway':
            check_gateway(name, svc, services, nodes, read_config, docker if name == 'gateway' else None, problems)


def check_gateway(name, gateway, services, nodes, read_config, docker, problems):
    where = 'compose: ' + name
    command = gateway.get('command') or (docker or {}).get('cmd') or []
    if docker and docker.get('cmd') and docker['cmd'] != command:
        problems.add('compose: the gateway command differs from the Dockerfile CMD: ' + str(command))
    path = config_path(command, problems, where + ' command')
    if not path:
        return
    config = read_config(path)
    if config is None:
        problems.add(where + ': the gateway config ' + path + ' does not exist')
        return
    port = config.get('listen', {}).get('port')
    published = [str(p).rsplit(':', 1)[-1] for p in gateway.get('ports') or []]
    if str(port) not in published:
        problems.add(where + ': ' + path + ' listens on ' + str(port) + ', the gateway publishes ' + str(published))
    if docker and str(port) not in ' '.join(docker.get('expose', [])).split():
        problems.add('Dockerfile: EXPOSE ' + str(docker.get('expose')) + ' is not ' + path + "'s listen port " + str(port))
    environment = gateway.get('environment') or {}
    for var in sorted(env_names(config)):
        if var not in environment:
            problems.add(where + ': ' + path + ' reads $' + var + ', which the gateway service does not set')
    url_env = config.get('database', {}).get('url_env')
    if url_env in environment:
        url = str(environment[url_env])
        hosts = database_hosts(url)
        if not hosts or any(h not in services for h in hosts):
            problems.add(where + ': ' + url_env + ' names no compose service as host: ' + url)
        if len(hosts) > 1 and 'target_session_attrs=read-write' not in url:
            problems.add(where + ': ' + url_env + ' lists several hosts without target_session_attrs=read-write: ' + url)
        if any(h in nodes for h in hosts) and sorted(hosts) != sorted(nodes):
            problems.add(where + ': ' + url_env + ' lists ' + ', '.join(hosts) + ', the Patroni nodes are ' +
                         ', '.join(sorted(nodes)))
    state = config.get('database', {}).get('guard_state_file')
    if state:
        mounts = [str(v).split(':') for v in gateway.get('volumes') or []]
        own = [m for m in mounts if len(m) > 1 and state.startswith(m[1].rstrip('/') + '/')]
        if not own:
            problems.add(where + ': guard_state_file ' + state + ' is on no volume (a restart would forget the watermark)')
        for m in own:
            for other, svc in services.items():
                if other != name and any(str(v).split(':')[0] == m[0] for v in svc.get('volumes') or []):
                    problems.add(where + ': its guard state volume ' + m[0] + ' is shared with ' + other)

    for provider in config.get('providers', []):
        m = re.match(r'https?://([^:/]+):(\d+)', provider.get('base_url', ''))
        pwhere = where + ': provider ' + provider.get('name', '?')
        if not m:
            problems.add(pwhere + ': base_url ' + provider.get('base_url', '') + ' has no host:port')
            continue
        host, pport = m.group(1), m.group(2)
        svc = services.get(host)
        if not svc:
            problems.add(pwhere + ': base_url host ' + host + ' is not a compose service')
            continue
        pcmd = svc.get('command') or []
        if not pcmd or pcmd[0] != 'demo-provider':
            problems.add(pwhere + ': service ' + host + ' does not run demo-provider')
            continue
        if arg_after(pcmd, '--port') != pport:
            problems.add(pwhere + ': service ' + host + ' listens on --port ' + str(arg_after(pcmd, '--port')) +
                         ', base_url says ' + pport)
        if arg_after(pcmd, '--kind') != provider.get('name'):
            problems.add(pwhere + ': service ' + host + ' runs --kind ' + str(arg_after(pcmd, '--kind')))
        if arg_after(pcmd, '--listen') != '0.0.0.0':
            problems.add(pwhere + ': service ' + host + ' does not listen on 0.0.0.0 (other containers cannot reach it)')
        injected = {}
        for var in env_names(provider.get('credential', {})):
            injected.update(references(environment.get(var, '')))
        held = references((svc.get('environment') or {}).get('DEMO_PROVIDER_CREDENTIALS', ''))
        if injected != held:
            problems.add(pwhere + ': the gateway injects ' + str(injected) + ' but service ' + host + ' holds ' + str(held))


def dpkg_depends(packages):
    out = {}
    for p in packages:
        r = subprocess.run(['dpkg-query', '-W', '-f=${Depends}', p], capture_output=True, text=True)
        out[p] = [d.strip().split()[0] for d in r.stdout.split(',') if d.strip()] if r.returncode == 0 else []
    return out


def run(dockerfile, compose_text, read_config, build_packages, depends):
    problems = Problems()
    docker = check_dockerfile(dockerfile, build_packages, depends, problems)
    try:
        compose = yaml.safe_load(compose_text)
    except yaml.YAMLError as e:
        problems.add('docker-compose.yml does not parse: ' + str(e))
        return problems.items
    if not isinstance(compose, dict):
        problems.add('docker-compose.yml is not a mapping')
        return problems.items
    check_compose(compose, read_config, docker, problems)
    return problems.items


def main():
    os.chdir(REPO)
    dockerfile = open('Dockerfile').read()
    compose_text = open('docker-compose.yml').read()
    build_packages = subprocess.run(['scripts/deps.sh', '--list', 'build'], check=True, capture_output=True,
                                    text=True).stdout.split()
    depends = dpkg_depends(build_packages)

    def read_config(path):
        return json.load(open(path)) if os.path.isfile(path) else None

    problems = run(dockerfile, compose_text, read_config, build_packages, depends)
    for p in problems:
        print('check-container: ' + p, file=sys.stderr)
    if problems:
        return 1

    if '--self-test' in sys.argv:
        compose = yaml.safe_load(compose_text)

        def altered(edit):
            c = copy.deepcopy(compose)
            edit(c)
            return yaml.safe_dump(c)

        gw = lambda c: c['services']['gateway']
        cases = {
            'unparsable YAML': (dockerfile, 'services: [', read_config),
            'a credential variable dropped': (dockerfile, altered(lambda c: gw(c)['environment'].pop('CRM_KEY_TENANT_B')), read_config),
            'the database URL variable dropped': (dockerfile, altered(lambda c: gw(c)['environment'].pop('GATEWAY_DATABASE_URL')), read_config),
            'another published port': (dockerfile, altered(lambda c: gw(c).__setitem__('ports', ['127.0.0.1:8080:8081'])), read_config),
            'a provider port moved': (dockerfile, altered(lambda c: c['services']['crm-provider']['command'].__setitem__(6, '9999')), read_config),
            'a provider service renamed': (dockerfile, altered(lambda c: c['services'].__setitem__('booking', c['services'].pop('booking-provider'))), read_config),
            'a provider credential default changed': (dockerfile, altered(lambda c: c['services']['booking-provider']['environment'].__setitem__(
                'DEMO_PROVIDER_CREDENTIALS', '${BOOKING_KEY_TENANT_A:-other},${BOOKING_KEY_TENANT_B:-booking-secret-tenant-b}')), read_config),
            'a missing config file': (dockerfile, altered(lambda c: gw(c).__setitem__('command', ['write-gateway', '--config', '/etc/write-gateway/none.json'])), read_config),
            'a package installed beside deps.sh': (dockerfile.replace('scripts/deps.sh build', 'scripts/deps.sh build && apt-get install -y libfoo-dev'), compose_text, read_config),
            'deps.sh not run': (dockerfile.replace('scripts/deps.sh build', 'true'), compose_text, read_config),
            'a runtime package no build package needs': (dockerfile.replace('libpq5', 'libpq5 libfoo1'), compose_text, read_config),
            'an HA gateway without a credential variable': (dockerfile, altered(lambda c: c['services']['gateway-ha-2']['environment'].pop('CRM_KEY_TENANT_A')), read_config),
            'an HA gateway URL missing a node': (dockerfile, altered(lambda c: c['services']['gateway-ha-1']['environment'].__setitem__(
                'GATEWAY_DATABASE_URL', 'postgresql://postgres@pg1:5432,pg2:5432/postgres?target_session_attrs=read-write')), read_config),
            'an HA gateway URL without target_session_attrs': (dockerfile, altered(lambda c: c['services']['gateway-ha-1']['environment'].__setitem__(
                'GATEWAY_DATABASE_URL', 'postgresql://postgres@pg1:5432,pg2:5432,pg3:5432/postgres')), read_config),
            'an HA gateway guard state on no volume': (dockerfile, altered(lambda c: c['services']['gateway-ha-2'].pop('volumes')), read_config),
            'two HA gateways sharing a guard state volume': (dockerfile, altered(lambda c: c['services']['gateway-ha-2'].__setitem__(
                'volumes', ['gateway-ha-1-state:/var/lib/write-gateway'])), read_config),
            'a default service depending on an HA one': (dockerfile, altered(lambda c: gw(c)['depends_on'].__setitem__('pg1', {'condition': 'service_healthy'})), read_config),
            'two Patroni nodes with one name': (dockerfile, altered(lambda c: c['services']['pg3']['environment'].__setitem__('PATRONI_NAME', 'pg2')), read_config),
            'the Patroni config not in the repository': (dockerfile, altered(lambda c: c['services']['pg2'].__setitem__(
                'volumes', ['./deploy/ha/none.yml:/etc/patroni/patroni.yml:ro', 'pg2-data:/var/lib/postgresql/patroni'])), read_config),
            'a Dockerfile that does not exist': (dockerfile, altered(lambda c: c['services']['etcd']['build'].__setitem__('dockerfile', 'deploy/ha/none.Dockerfile')), read_config),
        }
        failed = 0
        for name, (d, c, r) in cases.items():
            found = run(d, c, r, build_packages, depends)
            if not found:
                print('check-container self-test: not caught: ' + name, file=sys.stderr)
                failed = 1
        if failed:
            return 1
        print('check-container: self-test: each of %d altered copies is refused' % len(cases))
    print('check-container: Dockerfile and docker-compose.yml agree with scripts/deps.sh and config/')
    return 0


if __name__ == '__main__':
    sys.exit(main())
