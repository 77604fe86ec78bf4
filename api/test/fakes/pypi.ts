/**
 * PyPI fake: the recorded JSON for `six`, and a small PEP 691 name index. The index names and the
 * JSON served for names other than `six` are stand-ins (the recorded `six` document with its name
 * changed), since only one project was recorded; the format is the documented one.
 */
import { recorded, startFake } from './upstream.ts';
import type { FakeAnswer, FakeUpstream } from './upstream.ts';

export const FAKE_PYPI_NAMES = ['six', 'sixer', 'django-six', 'Six.Utils', 'requests', 'numpy', 'sphinx', 'pysix'];

const json = (doc: unknown, type = 'application/json'): FakeAnswer => ({ status: 200, headers: { 'content-type': type }, body: JSON.stringify(doc) });
const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

export function startFakePypi(): Promise<FakeUpstream> {
  const six = JSON.parse(recorded('pypi-project.json').toString('utf8')) as { info: Record<string, unknown> };
  return startFake((url, mode) => {
    if (mode !== 'ok') return undefined;
    if (url.pathname === '/simple/') {
      const index = { meta: { 'api-version': '1.1' }, projects: FAKE_PYPI_NAMES.map((name) => ({ name })) };
      return json(index, 'application/vnd.pypi.simple.v1+json');
    }
    const project = /^\/pypi\/([^/]+)\/json$/.exec(url.pathname)?.[1];
    const known = FAKE_PYPI_NAMES.find((n) => normalize(n) === project);
    if (!known) return { status: 404, headers: { 'content-type': 'application/json' }, body: '{"message": "Not Found"}' };
    if (project === 'six') return { status: 200, headers: { 'content-type': 'application/json' }, body: recorded('pypi-project.json') };
    return json({ ...six, info: { ...six.info, name: known, package_url: `https://pypi.org/project/${known}/` } });
  });
}
