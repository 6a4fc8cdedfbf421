"""building/pch.py: which header commands a set of candidates shares, how a build.ninja names
its own, and gcc taking a precompiled header from CPATH for the same object file (shown on a
small header tree of the test's own, in place of torch's, which takes a minute to compile)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from pytest_kernelbench.building import pch

NINJA = """ninja_required_version = 1.3
cxx = c++

cflags = -DTORCH_EXTENSION_NAME=ext_a -DTORCH_API_INCLUDE_EXTENSION_H -isystem {include} -fPIC -std=c++17 -O3
post_cflags = -DPYBIND11_BUILD_ABI=\\"_cxxabi1017\\"
ldflags = -shared

rule compile
  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags
"""
HEADER = """#pragma once
#include <vector>
#include <map>
#include <string>
inline int header_value(int x) {
    std::map<std::string, std::vector<int>> m;
    m["a"].push_back(x);
    return m["a"][0] * 2;
}
"""
SOURCE = "int answer() { return header_value(21); }\n"
INCLUDE = "#include <torch/extension.h>\n"
gcc = pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")


def header_tree(tmp_path):
    include = tmp_path / "include"
    (include / "torch").mkdir(parents=True)
    (include / pch.HEADER).write_text(HEADER)
    return include


def test_a_build_files_header_command_drops_the_extension_name_and_keeps_every_other_flag(tmp_path):
    include = header_tree(tmp_path)
    command = pch.header_command(NINJA.format(include=include))
    assert command == ["c++", "-DTORCH_API_INCLUDE_EXTENSION_H", "-isystem", str(include), "-fPIC",
                       "-std=c++17", "-O3", '-DPYBIND11_BUILD_ABI="_cxxabi1017"', "-x",
                       "c++-header", str(include / pch.HEADER)]
    other = pch.header_command(NINJA.format(include=include).replace("ext_a", "ext_b"))
    assert pch.key(other) == pch.key(command)  # one header for every extension name
    assert pch.key(pch.header_command(NINJA.format(include=include).replace("-O3", "-O2"))) \
        != pch.key(command)
    assert pch.header_command(NINJA.format(include=tmp_path / "elsewhere")) is None
    assert pch.header_command("rule compile\n") is None


@pytest.mark.parametrize(("call", "expected"), [
    ('load_inline(name="a", cpp_sources=s, extra_cflags=["-O3"])', [(["-O3"], False)]),
    ('load_inline(name="a", cpp_sources=s, cuda_sources=c)', [([], True)]),
    ('load_inline(name="a", cpp_sources=s, cuda_sources=c, with_cuda=False)', [([], False)]),
    ('cpp_extension.load_inline("a", s, extra_cflags=("-O2", "-DN=4"))', [(["-O2", "-DN=4"], False)]),
    ('load_inline(name="a", cpp_sources=s, extra_cflags=flags)', []),  # not a literal
    ('load_inline(name="a", cpp_sources=s, extra_cflags="-O3")', []),  # a string: its characters
    ('load_inline(name="a", cpp_sources=s, extra_cflags=["-fplugin=x.so"])', []),
    ('load_inline(name="a", cpp_sources=s, extra_cflags=["-include", "x.h"])', []),
    ('load_inline(name="a", cpp_sources=s, extra_include_paths=["inc"])', []),
    ('load(name="a", sources=["a.cpp"])', []),
])
def test_only_literal_safe_flags_of_load_inline_calls_plan_a_header(call, expected):
    assert pch.literal_options(f"from torch.utils import cpp_extension\n{call}\n") == expected


def test_a_header_is_planned_only_for_flags_that_enough_candidates_share():
    shared = 'load_inline(name="a", cpp_sources=s, extra_cflags=["-O3"])\n'
    alone = 'load_inline(name="b", cpp_sources=s, extra_cflags=["-O1"])\n'
    commands = pch.planned_commands([shared, shared * 2, shared, alone], min_uses=3)
    assert len(commands) == 1 and "-O3" in commands[0] and "-O1" not in commands[0]
    assert pch.planned_commands([shared, shared], min_uses=3) == []


def test_a_growing_set_of_sources_calls_for_a_header_once_enough_share_it():
    shared = 'load_inline(name="a", cpp_sources=s, extra_cflags=["-O3"])\n'
    plan = pch.HeaderPlan(min_uses=3)
    for _ in range(2):
        plan.add(shared)
        assert plan.due() == []
    plan.add(shared)
    [command] = plan.due()
    assert "-O3" in command and command == pch.planned_commands([shared] * 3)[0]
    plan.add(shared)
    assert plan.due() == []  # each command once


def compile_object(tmp_path, include, name, extra_env_folder=None, includes=1):
    source = tmp_path / "main.cpp"
    source.write_text(INCLUDE * includes + SOURCE)
    out = tmp_path / f"{name}.o"
    with pch.on_cpath(extra_env_folder):
        done = subprocess.run(["c++", "-H", "-isystem", str(include), "-fPIC", "-O2", "-c",
                               str(source), "-o", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out.read_bytes(), done.stderr


def make_header(root, command, ended=None):
    ended = [] if ended is None else ended
    pch.Headers(root, [command], on_end=lambda *end: ended.append(end)).wait(timeout_s=60)
    return pch.include_folder(root, command)


@gcc
@pytest.mark.parametrize("includes", [1, 2])  # load_inline's include, then often the candidate's
def test_gcc_takes_the_precompiled_header_from_cpath_and_makes_the_same_object(tmp_path, includes):
    include = header_tree(tmp_path)
    command = ["c++", "-isystem", str(include), "-fPIC", "-O2", "-x", "c++-header",
               str(include / pch.HEADER)]
    ended = []
    folder = make_header(tmp_path / "pch", command, ended)
    assert folder is not None and (folder / pch.PRECOMPILED).is_file()
    [(where, seconds, made)] = ended  # the pool's progress line is told of it
    assert where == folder and made and seconds > 0
    plain, plain_trace = compile_object(tmp_path, include, "plain", includes=includes)
    helped, helped_trace = compile_object(tmp_path, include, "helped", folder, includes)
    assert f"! {folder / pch.PRECOMPILED}" in helped_trace  # gcc's mark of a used header
    assert "extension.h.gch" not in plain_trace
    assert helped == plain


@gcc
def test_a_header_whose_flags_differ_is_passed_over_and_the_text_header_parsed(tmp_path):
    include = header_tree(tmp_path)
    command = ["c++", "-isystem", str(include), "-fPIC", "-O0", "-x", "c++-header",
               str(include / pch.HEADER)]  # -O0: the build below compiles with -O2
    folder = make_header(tmp_path / "pch", command)
    plain, _ = compile_object(tmp_path, include, "plain")
    helped, trace = compile_object(tmp_path, include, "helped", folder)
    assert f"! {folder / pch.PRECOMPILED}" not in trace
    assert f". {folder / pch.HEADER}" in trace  # the text header, through its link there
    assert helped == plain


def test_a_build_process_finds_the_header_of_its_own_build_file_only(tmp_path, monkeypatch):
    include = header_tree(tmp_path)
    root = tmp_path / "pch"
    build = tmp_path / "ext"
    build.mkdir()
    (build / "build.ninja").write_text(NINJA.format(include=include))
    command = pch.header_command(NINJA.format(include=include))
    made = root / pch.key(command) / pch.PRECOMPILED
    made.parent.mkdir(parents=True)
    made.write_bytes(b"header")
    monkeypatch.setenv(pch.ROOT_ENV, str(root))
    assert pch.for_build(str(build)) is None  # no text header beside it: not used
    (made.parent / pch.HEADER.name).symlink_to(include / pch.HEADER)
    monkeypatch.delenv(pch.ROOT_ENV, raising=False)
    assert pch.for_build(str(build)) is None  # the harness named no root
    monkeypatch.setenv(pch.ROOT_ENV, str(root))
    assert pch.for_build(str(build)) == made.parent.parent
    (build / "build.ninja").write_text(NINJA.format(include=include).replace("-O3", "-O1"))
    assert pch.for_build(str(build)) is None
    (build / "build.ninja").write_text('cxx = c++\ncflags = -DX="unclosed\n')  # shlex fails
    assert pch.for_build(str(build)) is None  # the build goes on without a header


@gcc
def test_a_header_that_fails_to_compile_is_not_tried_again_and_a_killed_one_is(tmp_path):
    include = header_tree(tmp_path)
    (include / pch.HEADER).write_text("#error broken\n")
    command = ["c++", "-isystem", str(include), "-x", "c++-header", str(include / pch.HEADER)]
    ended = []
    assert make_header(tmp_path / "pch", command, ended) is None
    assert [made for _, _, made in ended] == [False]
    assert pch.start(tmp_path / "pch", command) is None  # failed before
    (include / pch.HEADER).write_text(HEADER)
    slow = ["sh", "-c", "sleep 30", "--"]
    headers = pch.Headers(tmp_path / "other", [slow], on_end=lambda *end: ended.append(end))
    assert headers.poll(stop=True) == 0
    assert len(ended) == 1  # a header killed at the run's end is not reported as failed
    assert not (tmp_path / "other" / pch.key(slow) / pch.FAILED).exists()
    again = pch.start(tmp_path / "other", slow)  # free to make it again
    assert again is not None
    again[0].kill()
    again[0].wait()
    waited = pch.Headers(tmp_path / "third", [slow])
    waited.wait(timeout_s=0.2)  # past its time, the compile left is killed
    assert waited.poll() == 0 and not (tmp_path / "third" / pch.key(slow) / pch.FAILED).exists()


def test_the_progress_line_names_the_header_its_time_and_size_or_its_log(tmp_path):
    from pytest_kernelbench.engine.prebuild import header_line

    (tmp_path / pch.PRECOMPILED).parent.mkdir()
    (tmp_path / pch.PRECOMPILED).write_bytes(b"\0" * 2_000_000)
    assert header_line(tmp_path, 36.04, True) == (
        f"kernelbench: torch/extension.h precompiled in 36.0 s for the builds that share its "
        f"command ({tmp_path}, 0.00 GB)")
    assert header_line(tmp_path / "gone", 1.0, True).endswith(f"({tmp_path / 'gone'})")
    assert str(tmp_path / "pch.log") in header_line(tmp_path, 1.0, False)


def test_the_header_command_comes_from_torchs_writer_whatever_parameters_it_takes(monkeypatch):
    import torch.utils.cpp_extension as cpp_extension

    current = pch.torch_command(["-O3"], with_cuda=False)
    assert current is not None and "-O3" in current and current[-1].endswith(str(pch.HEADER))
    real = cpp_extension._write_ninja_file_to_build_library

    def before_sycl(path, name, sources, extra_cflags, extra_cuda_cflags, extra_ldflags,
                    extra_include_paths, with_cuda, is_standalone):  # an older torch's (no SYCL)
        real(path=path, name=name, sources=sources, extra_cflags=extra_cflags,
             extra_cuda_cflags=extra_cuda_cflags, extra_sycl_cflags=[],
             extra_ldflags=extra_ldflags, extra_include_paths=extra_include_paths,
             with_cuda=with_cuda, with_sycl=False, is_standalone=is_standalone)

    monkeypatch.setattr(cpp_extension, "_write_ninja_file_to_build_library", before_sycl)
    assert pch.torch_command(["-O3"], with_cuda=False) == current

    def asks_more(path, name, sources, extra_cflags, with_cuda, is_standalone, unheard_of):
        raise AssertionError("not called without a value for every parameter")

    monkeypatch.setattr(cpp_extension, "_write_ninja_file_to_build_library", asks_more)
    assert pch.torch_command(["-O3"], with_cuda=False) is None
