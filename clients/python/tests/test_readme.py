# SPDX-License-Identifier: Apache-2.0
"""The Python example of the repository's README ("Embedding") runs as written against a real
cordond found at its default socket ($XDG_RUNTIME_DIR/cordon/cordond.sock), and prints what the
README says it prints."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from tests.harness import BASE, SOURCE, Daemon

PKG = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def example(lang):
    with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    at = readme.index(f"<!-- embedding-example: {lang} ")
    code = re.search(r"```[a-z]*\n(.*?)```", readme[at:], re.S).group(1)
    assert len(code.rstrip().split("\n")) <= 13, "about ten lines"
    return code


class ReadmeTest(unittest.TestCase):
    def test_python_example(self):
        code = example("python")
        rt = tempfile.mkdtemp(prefix="cordon-py-readme-", dir=BASE)
        d = Daemon(env={"XDG_RUNTIME_DIR": rt}, socket_arg=False,
                   sock=os.path.join(rt, "cordon", "cordond.sock"))
        try:
            script = os.path.join(d.dir, "example.py")
            with open(script, "w", encoding="utf-8") as f:
                f.write(code)
            env = dict(os.environ, XDG_RUNTIME_DIR=rt, PYTHONPATH=PKG)
            r = subprocess.run([sys.executable, script], cwd=d.ws, env=env, capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = r.stdout.rstrip("\n").split("\n")
            # The output and the refusal come on two channels (the command's pipe, the
            # supervisor): their order is not fixed; the exit status comes last.
            self.assertEqual(sorted(lines[:-1]), [
                "hello from the sandbox", f"refused: file-create-name {d.ws}/.env"])
            self.assertEqual(lines[-1], "exit 1")
            self.assertFalse(os.path.exists(os.path.join(d.ws, ".env")))
        finally:
            self.assertEqual(d.cleanup(), 0)
            shutil.rmtree(rt, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
