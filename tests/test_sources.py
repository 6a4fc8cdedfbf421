"""A source a candidate writes again with the same bytes is not compiled again (building/sources.py)."""

import time

import torch.utils.cpp_extension as cpp_extension

from pytest_kernelbench.building import sources

NINJA = """\
rule compile
  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags
build main.o: compile /work/with$ space/main.cpp
build kernel.cuda.o: cuda_compile /work/code/kernel.cu
build ext.so: link main.o kernel.cuda.o
"""


def test_the_compiled_sources_are_read_from_torchs_build_file():
    assert sources.ninja_sources(NINJA) == [sources.Path("/work/with space/main.cpp"),
                                            sources.Path("/work/code/kernel.cu")]


def _write_again(path, text):
    time.sleep(0.02)  # a later time than the one recorded, as an import's rewrite has
    path.write_text(text)


def test_a_rewritten_source_gets_its_builds_time_back_only_if_its_bytes_are_the_same(tmp_path):
    code, build = tmp_path / "code", tmp_path / "build"
    code.mkdir(), build.mkdir()
    (code / "same.cpp").write_text("int same;")
    (code / "changed.cpp").write_text("int changed;")
    (code / "helper.h").write_text("// included by both")
    (code / "notes.txt").write_text("not a source")
    (build / "build.ninja").write_text(f"build a.o: compile {code / 'same.cpp'}\n"
                                       f"build b.o: compile {code / 'changed.cpp'}\n")
    sources.record(build)
    built_at = {p.name: p.stat().st_mtime_ns for p in code.iterdir()}
    _write_again(code / "same.cpp", "int same;")
    _write_again(code / "helper.h", "// included by both")
    _write_again(code / "changed.cpp", "int changed = 1;")
    _write_again(code / "notes.txt", "not a source")  # same bytes, but no source: left alone

    restored = sources.restore_times(build)

    assert sorted(p.name for p in restored) == ["helper.h", "same.cpp"]
    assert (code / "same.cpp").stat().st_mtime_ns == built_at["same.cpp"]
    assert (code / "helper.h").stat().st_mtime_ns == built_at["helper.h"]
    assert (code / "changed.cpp").stat().st_mtime_ns > built_at["changed.cpp"]


def test_a_folder_never_built_restores_nothing(tmp_path):
    assert sources.restore_times(tmp_path) == []


def _load_in_a_fresh_process(monkeypatch, source, build, text):
    """torch's load as a new process sees it: its versioner has seen no extension yet (in the
    process that built it, load builds nothing again for the same source)."""
    monkeypatch.setattr(cpp_extension, "JIT_EXTENSION_VERSIONER", cpp_extension.ExtensionVersioner())
    _write_again(source, text)
    cpp_extension.load(name="kb_sources_test", sources=[str(source)], build_directory=str(build),
                       is_python_module=False, is_standalone=False)
    return (build / "one.o").stat().st_mtime_ns


def test_torchs_load_of_a_rewritten_source_compiles_only_when_its_bytes_changed(tmp_path, monkeypatch):
    """cpp_extension.load on files the caller writes again before each load, as generated
    candidates do at import: without the wrapper, ninja compiles the same bytes again; with it,
    the object is kept for the same bytes and made again for new ones."""
    monkeypatch.setattr(cpp_extension, "_run_ninja_build", cpp_extension._run_ninja_build)
    code, build = tmp_path / "code", tmp_path / "build"
    code.mkdir(), build.mkdir()
    source, one = code / "one.cpp", 'extern "C" int kb_one() { return 1; }'

    first = _load_in_a_fresh_process(monkeypatch, source, build, one)
    assert _load_in_a_fresh_process(monkeypatch, source, build, one) != first  # ninja, by times

    sources.keep_unchanged_sources()
    built = _load_in_a_fresh_process(monkeypatch, source, build, one)
    assert _load_in_a_fresh_process(monkeypatch, source, build, one) == built
    assert _load_in_a_fresh_process(monkeypatch, source, build, one.replace("1;", "2;")) != built


def test_each_wrapper_of_torchs_ninja_runner_is_installed_once_whatever_came_after_it(monkeypatch):
    from pytest_kernelbench.building import pch

    monkeypatch.setattr(cpp_extension, "_run_ninja_build", cpp_extension._run_ninja_build)
    sources.keep_unchanged_sources()
    pch.use_for_builds()
    runner = cpp_extension._run_ninja_build
    sources.keep_unchanged_sources()  # a second candidate's load in the same process
    pch.use_for_builds()
    assert cpp_extension._run_ninja_build is runner
    assert runner.kb_marks == {"keeps_times", "headers"}
