# lit configuration of the compiler pass tests (RUN lines use ral-opt, ral-compile, FileCheck).
import os
import platform

import lit.formats

config.name = "RAL compiler passes"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir"]
config.test_source_root = config.ral_test_src_dir
config.test_exec_root = config.ral_test_obj_dir
config.excludes = ["Inputs", "e2e", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

path = [config.ral_tools_dir, config.ral_run_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
config.environment["PATH"] = os.pathsep.join(path)
config.substitutions.append(("%python", config.python))
# Host code variants are x86-64 levels (ral/host_variant.h).
if platform.machine() == "x86_64":
    config.available_features.add("x86_64")
