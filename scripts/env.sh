# Sourced by the scripts, from the repository root (. scripts/env.sh): the Go
# toolchain is the one go.mod's toolchain line names, the only place its
# version is written. GOTOOLCHAIN=<that version> makes any Go since 1.21
# fetch it from the module proxy and run it, whatever the machine's own Go
# and its go.env say (here Go 1.26 with GOTOOLCHAIN=local).
GOTOOLCHAIN=$(sed -n 's/^toolchain //p' go.mod 2>/dev/null)
if [ -z "$GOTOOLCHAIN" ]; then
	echo "scripts/env.sh: no toolchain line in $PWD/go.mod (source it from the repository root)" >&2
	return 1 2>/dev/null || exit 1
fi
export GOTOOLCHAIN
