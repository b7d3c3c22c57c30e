"""Watching calls into the C extension, for the `no_core` mark (conftest.py)."""
import contextlib
import sys
import types


@contextlib.contextmanager
def core_calls():
    """Collect, in the list it yields, the name of each call into
    kbspline._kbspline made while the block runs: through the module, or
    through a reference to one of its functions that a kbspline module or
    class holds (``_table_fn = staticmethod(_core.length_table)``)."""
    called = []
    try:
        from kbspline import _kbspline as core
    except ImportError:   # nothing built, nothing to call
        yield called
        return
    functions = {id(f): f for f in vars(core).values() if isinstance(f, types.BuiltinFunctionType)}

    def is_core(value):
        return functions.get(id(value)) is value

    def recorder(function):
        def record(*args, **kwargs):
            called.append(function.__name__)
            return function(*args, **kwargs)
        return record

    patched = []   # (owner, name, original), undone in reverse
    modules = [m for n, m in list(sys.modules.items())
               if m is not None and n.split(".")[0] == "kbspline"]
    try:
        for module in modules:
            for name, value in list(vars(module).items()):
                if is_core(value):
                    patched.append((module, name, value))
                    setattr(module, name, recorder(value))
                elif isinstance(value, type):
                    for attr, held in list(vars(value).items()):
                        if isinstance(held, staticmethod) and is_core(held.__func__):
                            patched.append((value, attr, held))
                            setattr(value, attr, staticmethod(recorder(held.__func__)))
        yield called
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)
