#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(int argc,char**argv){
  size_t n = argc>1? strtoul(argv[1],0,0): 262144; int mode = argc>2? atoi(argv[2]):0;
  unsigned char* sh = mmap(0, n+4096, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0); memset(sh,0,n+4096);
  volatile int* flag = (volatile int*)(sh + n);
  int iters=2000;
  pid_t p = fork();
  if (p==0){ float acc=0; for(int i=0;i<iters;i++){ while(*flag!=2*i+1) _mm_pause(); const float* f=(const float*)sh; for(size_t j=0;j<n/4;j+=16) acc+=f[j]; *flag=2*i+2;} printf("%f\r",acc); _exit(0);}
  unsigned char* src = malloc(n); memset(src,1,n);
  double tot=0, totwait=0;
  for(int i=0;i<iters;i++){ double t0=now(); if(mode==0) memcpy(sh,src,n); else if(mode==1){ for(size_t j=0;j<n;j+=64) _mm512_storeu_si512(sh+j,_mm512_loadu_si512(src+j)); } else { for(size_t j=0;j<n;j+=64) _mm512_stream_si512((void*)(sh+j),_mm512_loadu_si512(src+j)); _mm_sfence(); } tot+=now()-t0; __atomic_thread_fence(__ATOMIC_SEQ_CST); *flag=2*i+1; double t1=now(); while(*flag!=2*i+2) _mm_pause(); totwait+=now()-t1;}
  waitpid(p,0,0); printf("mode %d copy %.1f us  wait %.1f us\n", mode, tot/iters, totwait/iters); return 0;}
