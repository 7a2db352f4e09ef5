/* warm6: pread the tool's read set (OFFSET LENGTH lines, from an strace) into one buffer ARG bytes past a page; prints ms.  gcc -O2 warm6-pread-offset.c; ./a.out IMAGE READSET OFFSET */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(int c,char**v){int fd=open(v[1],O_RDONLY);FILE*f=fopen(v[2],"r");int a=atoi(v[3]);static unsigned long long off[4096],len[4096];int n=0;
while(fscanf(f,"%llu %llu",&off[n],&len[n])==2)n++;
char *buf=aligned_alloc(4096,65536*2); memset(buf,0,65536*2);
double t0=now();
for(int i=0;i<n;i++) pread(fd,buf+a,len[i],off[i]);
double t1=now();printf("%.3f\n",(t1-t0)/1e6);}
