/* Native builds with the stand-in test toolchain (shared/native-toolchain) only, added by build-args.sh.
   The Kafka client reaches JAAS, so the image treats libjaas as a built-in JDK library and calls JNI_OnLoad_jaas.
   The toolchain links Temurin's shared JDK libraries instead of static ones and defines JNI_OnLoad_<lib> for java,
   nio, net, zip, extnet and management only; this adds jaas (its native methods are found in Temurin's libjaas.so,
   which the executable links too). Mandrel and GraalVM link their static libjaas.a: production images never use it. */
#include <jni.h>

JNIEXPORT jint JNICALL JNI_OnLoad_jaas(JavaVM *vm, void *reserved) {
  return JNI_VERSION_1_8;
}
