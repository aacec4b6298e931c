#!/bin/sh
# The entrypoint contract of UBI's openjdk runtime image (/opt/jboss/container/java/run/run-java.sh), the part the
# modules' Dockerfile.jvm and the prod-jvm overlay use: JAVA_APP_JAR, JAVA_OPTS, JAVA_OPTS_APPEND and
# JAVA_MAX_MEM_RATIO (heap as a percentage of the container's memory limit). exec: java is PID 1 and gets SIGTERM.
set -e
ratio=${JAVA_MAX_MEM_RATIO:-80}
# shellcheck disable=SC2086 # the options are word lists, as in run-java.sh
exec java -XX:MaxRAMPercentage="$ratio" -XX:+ExitOnOutOfMemoryError ${JAVA_OPTS:-} ${JAVA_OPTS_APPEND:-} \
  -jar "${JAVA_APP_JAR:?JAVA_APP_JAR is not set}" "$@"
