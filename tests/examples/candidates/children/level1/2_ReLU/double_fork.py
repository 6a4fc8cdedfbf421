# expect: sandbox_violation
import os

import torch
import torch.nn as nn

# A grandchild, detached from the candidate by a second fork, writes outside its folders and
# swallows the refusal; the candidate waits for it to finish (its pipe end closing).
done_read, done_write = os.pipe()
child = os.fork()
if child == 0:
    if os.fork() == 0:
        os.close(done_read)
        try:
            with open(os.environ["KB_CHILD_TARGET"], "w") as target:
                target.write("x")
        except OSError:
            pass
        os._exit(0)
    os._exit(0)
os.close(done_write)
os.waitpid(child, 0)
os.read(done_read, 1)  # end of file once the grandchild exits
os.close(done_read)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
