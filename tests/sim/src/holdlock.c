/* sim-holdlock SECONDS FILE...: holds an exclusive fcntl (POSIX) write lock on each FILE, as apt and dpkg
 * take them, for SECONDS, under the process name "unattended-upgr" (what a boot-time unattended-upgrades
 * run shows in /proc/PID/comm). Prints "locked" once all are held. Used by the dpkg-lock scenario. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: sim-holdlock SECONDS FILE...\n");
    return 2;
  }
  prctl(PR_SET_NAME, "unattended-upgr", 0, 0, 0);
  for (int i = 2; i < argc; ++i) {
    int fd = open(argv[i], O_RDWR | O_CREAT, 0640);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fd < 0 || fcntl(fd, F_SETLKW, &fl) != 0) {
      perror(argv[i]);
      return 1;
    }
  }
  printf("locked\n");
  fflush(stdout);
  sleep((unsigned)atoi(argv[1]));
  return 0;
}
