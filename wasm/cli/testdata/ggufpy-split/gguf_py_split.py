# python3 gguf_py_split.py SRC.gguf OUT.gguf N [GGUF_PY_DIR]: SRC split by llama.cpp's gguf-py GGUFWriter
# (split_max_tensors=N) into OUT-00001-of-0000K.gguf, ...; needs numpy.
import sys
sys.path.insert(0, sys.argv[4] if len(sys.argv) > 4 else "gguf-py")  # a llama.cpp checkout's gguf-py
import gguf
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = gguf.GGUFReader(src)
arch = r.fields["general.architecture"].contents()
w = gguf.GGUFWriter(out, arch, split_max_tensors=n)
for field in r.fields.values():
    if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
        continue
    vt = field.types[0]
    st = field.types[-1] if vt == gguf.GGUFValueType.ARRAY else None
    w.add_key_value(field.name, field.contents(), vt, sub_type=st)
for t in r.tensors:
    w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
