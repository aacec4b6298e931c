#!/usr/bin/env bash
# Prints the Maven arguments that native builds with the stand-in test toolchain (shared/native-toolchain) need on top
# of -Dquarkus.native.graalvm-home, nothing for a real GraalVM or Mandrel home. Usage:
#   read -ra args < <(scripts/native-toolchain/build-args.sh "$G")
#   ./mvnw package -Dnative -Dquarkus.native.graalvm-home="$G" "${args[@]}" -pl <module> -am
# The toolchain defines JNI_OnLoad_<lib> only for java, nio, net, zip, extnet and management; the Kafka client makes
# the image load jaas as a built-in library, so the Kafka services' link fails with "undefined reference to
# JNI_OnLoad_jaas" without jaas-onload.c (compiled into GRAALVM_HOME once) and Temurin's libjaas.so.
set -euo pipefail
graalvm_home=${1:?usage: build-args.sh GRAALVM_HOME}
# libsvmjvmshim.so is the toolchain's own (its README): a real distribution has none
[[ -f $graalvm_home/lib/libsvmjvmshim.so ]] || exit 0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
object=$graalvm_home/lib/payments-jaas-onload.o
if [[ ! -f $object || $here/jaas-onload.c -nt $object ]]; then
  gcc -c -fPIC -O2 -I"$graalvm_home/include" -I"$graalvm_home/include/linux" -o "$object" "$here/jaas-onload.c"
fi
echo "-Dquarkus.native.additional-build-args=-H:NativeLinkerOption=$object,-H:NativeLinkerOption=$graalvm_home/lib/libjaas.so"
