// An agent process paused (SIGSTOP) past its lease, then resumed (SIGCONT), while another owner
// took the task over: it refuses to send. Neither the gateway (no rejection, no operation) nor
// the provider (no request) saw anything of it.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { Gateway } from '../../src/index.js';
import { AGENT_TOKEN, admin, booking, eventually, fresh, gatewayUrl } from '../support.js';

test('a paused agent does not send after its lease', async () => {
  const taskName = fresh('paused');
  const slot = fresh('slot');
  const child = spawn(process.execPath, [fileURLToPath(new URL('../fixtures/paused_agent.js', import.meta.url)), gatewayUrl(), taskName, slot], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const next = async (): Promise<any> => {
    const [line] = (await once(lines, 'line')) as [string];
    return JSON.parse(line);
  };
  try {
    assert.equal((await next()).claimed, true);
    process.kill(child.pid!, 'SIGSTOP');
    child.stdin.write('go\n'); // read only after SIGCONT

    // Past its lease, by the gateway's clock; then someone else owns the task.
    await eventually('the paused agent\'s lease has expired', async () => (await admin.taskView('tenant-a', taskName)).expired === true);
    const other = new Gateway({ baseUrl: gatewayUrl(), token: AGENT_TOKEN });
    await using successor = await other.claim({ tenant: 'tenant-a', task: taskName, owner: 'successor', leaseMs: 60_000 });

    process.kill(child.pid!, 'SIGCONT');
    const report = await next();
    assert.equal(report.outcome, 'refused', JSON.stringify(report));
    assert.equal(report.name, 'LeaseLostError');
    assert.equal(report.leaseLost, true);

    assert.equal((await admin.operation('tenant-a', taskName, 'book-after-pause')).status, 404, 'the gateway has no such operation');
    assert.deepEqual(await admin.rejections('tenant-a', taskName), [], 'nothing was presented to the gateway');
    assert.equal((await booking.requestsContaining(slot)).length, 0, 'the provider saw nothing');
    assert.equal(successor.version, 0);
  } finally {
    child.kill('SIGCONT');
    child.stdin.end();
    if (child.exitCode === null) await once(child, 'exit');
  }
});
